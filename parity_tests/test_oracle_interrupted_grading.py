"""`npformer-oracle grade` stopped by a signal sent to the grader alone (`kill -INT PID`, SIGTERM
from a job runner) ends its worker processes and answers in one line, instead of waiting on the
grades in flight for good; and a full disk while writing the grades or a bundle is one line naming
the file, with no temporary file left."""
from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time

import pytest

from parity_tests.harness.processes import children, grandchildren
from parity_tests.oracle.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "oracle")


def _ctrl_c_default():
    """In the grader: SIGINT at its default, as a command started from a terminal has it (a
    background shell starts its jobs with SIGINT ignored, which the grader would inherit)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="reads /proc for the workers")
@pytest.mark.parametrize("sig, code, words", [(signal.SIGINT, 130, "interrupted (Ctrl-C)"),
                                              (signal.SIGTERM, 143, "terminated (SIGTERM)")])
def test_a_grader_stopped_mid_grade_ends_its_workers_and_says_so(tmp_path, sig, code, words):
    out = tmp_path / "grades"
    p = subprocess.Popen([sys.executable, "-m", "parity_tests.oracle", "grade",
                          os.path.join(EXAMPLE, "submissions"), "--spec",
                          os.path.join(EXAMPLE, "assignment.toml"), "--out", str(out), "--quiet"],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=_ctrl_c_default)
    try:
        deadline = time.monotonic() + 120
        while not grandchildren(p.pid) and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)                      # until a worker runs a confined check
        assert p.poll() is None, "the grading ended before it could be interrupted"
        workers = children(p.pid)
        p.send_signal(sig)                        # the grader alone, not its process group
        _, err = p.communicate(timeout=90)
    finally:
        if p.poll() is None:
            for w in children(p.pid):
                os.kill(w, signal.SIGKILL)
            p.kill()
            p.wait()
    assert p.returncode == code, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in err, err
    assert not (out / "gradebook.csv").exists()
    time.sleep(0.2)
    alive = [w for w in workers if os.path.exists(f"/proc/{w}") and
             open(f"/proc/{w}/stat").read().split()[2] != "Z"]
    assert alive == [], f"worker processes left running: {alive}"


def _full_disk_on_write(monkeypatch):
    import parity_tests.oracle.core.report as report
    import parity_tests.oracle.grading.gradescope as gradescope

    real_fdopen = os.fdopen

    class Full:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *a):
            self.f.close()

        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

    def fdopen(fd, *a, **k):
        return Full(real_fdopen(fd, *a, **k))
    monkeypatch.setattr(report.os, "fdopen", fdopen)
    monkeypatch.setattr(gradescope.os, "fdopen", fdopen)


def test_a_full_disk_while_bundling_is_one_line_naming_the_zip(tmp_path, monkeypatch, capsys):
    zip_path = tmp_path / "autograder.zip"
    (tmp_path / "autograder.zip.tmp").write_text("a file of the user's")
    _full_disk_on_write(monkeypatch)
    assert main(["gradescope-bundle", os.path.join(EXAMPLE, "assignment.toml"),
                 "-o", str(zip_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(zip_path) in err[0] and "No space left" in err[0], err
    assert sorted(os.listdir(tmp_path)) == ["autograder.zip.tmp"]     # no temp file, theirs kept
    assert (tmp_path / "autograder.zip.tmp").read_text() == "a file of the user's"
