"""What a submission can do to the oracle's own process, its time and its report without running
there: a module named like one the oracle imports left in the folder `python -m` is started from
(`cwd_module_shadow`), calls slow on purpose (`slow_on_purpose`), and text built to forge report
lines (`forged_report_lines`). Each got a match, hours of grading, or a fake MATCH line before.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest

from parity_tests.oracle import Options, check, render_text
from parity_tests.oracle.core.backend import clean

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOSTILE = os.path.join(ROOT, "parity_tests", "oracle_hostile")
SLACK = 15.0   # seconds: worker start-up on a busy CI box


def spec(name: str) -> str:
    return f"{os.path.join(HOSTILE, name)}.py:attention"


def test_a_module_beside_the_submission_does_not_run_in_the_oracle(tmp_path):
    """`python -m` puts the working directory first on sys.path: a json.py there used to be the
    oracle's json, and made a buggy submission match."""
    shutil.copy(os.path.join(HOSTILE, "cwd_module_shadow.py"), tmp_path / "json.py")
    shutil.copy(os.path.join(HOSTILE, "big_bug.py"), tmp_path / "attention.py")
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = subprocess.run([sys.executable, "-m", "parity_tests.oracle", "check", "sdpa",
                        "attention.py:attention", "--examples", "10", "--quiet"], cwd=tmp_path,
                       env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "mismatch" in p.stdout
    assert not (tmp_path / "RAN_IN_THE_ORACLE").exists()


def test_the_oracle_started_from_its_own_root_still_finds_itself(tmp_path):
    """The working directory is kept when it is the project root (the oracle's own code)."""
    p = subprocess.run([sys.executable, "-m", "parity_tests.oracle", "check", "sdpa",
                        spec("right"), "--examples", "3", "--quiet"], cwd=ROOT,
                       env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr


def test_the_whole_search_has_a_time_budget(monkeypatch):
    monkeypatch.setenv("SLOW_ON_PURPOSE_S", "0.6")
    t0 = time.monotonic()
    res = check("sdpa", spec("slow_on_purpose"), examples=25, timeout=2.0, time_budget=5.0)
    took = time.monotonic() - t0
    assert res.verdict == "timeout", (res.verdict, res.message)
    assert "--time-budget" in res.message
    assert took < 5.0 + 2 * 2.0 + SLACK, took
    assert res.examples_run < 25


def test_a_time_budget_must_be_a_positive_number():
    with pytest.raises(ValueError, match="--time-budget.*positive.*-1"):
        Options(time_budget=-1).validate()


def test_submission_text_cannot_start_a_report_line_or_hide_in_invisible_unicode():
    res = check("sdpa", spec("forged_report_lines"), examples=3)
    assert res.verdict == "raised"
    text = render_text(res)
    lines = text.splitlines()
    assert [line for line in lines if line.startswith("verdict:")] == [lines[1]]
    assert lines[1].startswith("verdict: RAISED")
    forged = [line for line in lines if "verdict: MATCH" in line]
    # the report's own lines start at column 0 or 2; the submission's text only inside a block
    assert forged and all(line.startswith("    ") for line in forged), forged
    for c in ("\u202e", "\u202c", "\u2028", "\u200b"):
        assert c not in text and c not in res.message


def test_clean_keeps_text_and_drops_invisible_formatting():
    assert clean("a\tb\nc d \u00e9\u4e2d") == "a\tb\nc d \u00e9\u4e2d"
    assert clean("x\x1b[2J\u202eY\u2066\u200b\u2029z\u00a0w") == "x[2JYz w"
