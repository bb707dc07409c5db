"""A Ctrl-C that lands while `grade` waits for its workers (in `as_completed`, on a lock) can reach
the grader as the lock's RuntimeError ("release unlocked lock"), raised while the interrupt was
being handled. The grader still answers the interrupt: one line, exit 130, no traceback, no
gradebook."""
from __future__ import annotations

import os
import shutil

from parity_tests.oracle import cli
from parity_tests.oracle.grading import batch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "oracle")


def _interrupted_wait(futures):
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt:
        raise RuntimeError("release unlocked lock") from None   # __context__ stays the interrupt
    yield  # pragma: no cover - a generator, as as_completed is


def test_an_interrupt_surfacing_as_a_lock_error_is_answered_as_the_interrupt(
        tmp_path, monkeypatch, capsys):
    subs = tmp_path / "subs"
    shutil.copytree(os.path.join(EXAMPLE, "submissions", "alice"), subs / "alice")
    monkeypatch.setattr(batch, "as_completed", _interrupted_wait)
    rc = cli.main(["grade", str(subs), "--spec", os.path.join(EXAMPLE, "assignment.toml"),
                   "--out", str(tmp_path / "grades"), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 130, err
    assert "interrupted (Ctrl-C)" in err and "RuntimeError" not in err, err
    assert not (tmp_path / "grades" / "gradebook.csv").exists()
