"""`npformer-oracle grade` leaves nothing in the temporary folder, however it ends: finished, or
stopped mid-check by SIGINT or SIGTERM sent to the grader alone (a job runner) or to its whole
process group (`timeout -s TERM`, which signals its child and then the group; a terminal's
Ctrl-C). SIGTERM to the group ends the grading processes at once, before their own clean-up, so
the grader itself removes each submission's private copy (`oracle-sub-*`) and each worker's
scratch folder."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from parity_tests.harness.processes import children, grandchildren

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "oracle")


def _ctrl_c_default():
    """In the grader: SIGINT at its default, as a command started from a terminal has it (a
    background shell starts its jobs with SIGINT ignored, which the grader would inherit)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _grade(tmp_path):
    temp = tmp_path / "temp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp)}
    p = subprocess.Popen([sys.executable, "-m", "parity_tests.oracle", "grade",
                          os.path.join(EXAMPLE, "submissions"), "--spec",
                          os.path.join(EXAMPLE, "assignment.toml"), "--out",
                          str(tmp_path / "grades"), "--quiet", "--jobs", "2"],
                         cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True,           # its own group, as under `timeout`
                         preexec_fn=_ctrl_c_default)
    return p, temp


def _kill(p):
    if p.poll() is None:
        for w in children(p.pid):
            os.kill(w, signal.SIGKILL)
        p.kill()
        p.wait()


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="reads /proc for the workers")
@pytest.mark.parametrize("group", [False, True], ids=["grader", "group"])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_grader_stopped_mid_check_removes_the_copies_and_scratch_folders(tmp_path, sig, group):
    p, temp = _grade(tmp_path)
    try:
        deadline = time.monotonic() + 120
        while p.poll() is None and time.monotonic() < deadline and not (
                grandchildren(p.pid) and any(n.startswith("oracle-sub-") for n in os.listdir(temp))):
            time.sleep(0.05)                      # until a copy exists and a confined check runs
        assert p.poll() is None, "the grading ended before it could be interrupted"
        if group:
            os.killpg(p.pid, sig)                 # everyone: the grader and its grading processes
        else:
            p.send_signal(sig)                    # the grader alone
        _, err = p.communicate(timeout=90)
    finally:
        _kill(p)
    assert p.returncode in (130, 143), err
    assert sorted(os.listdir(temp)) == [], "left in the temporary folder"


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="reads /proc for the workers")
def test_a_finished_grading_leaves_the_temporary_folder_empty(tmp_path):
    p, temp = _grade(tmp_path)
    try:
        _, err = p.communicate(timeout=300)
    finally:
        _kill(p)
    assert p.returncode == 0, err
    assert (tmp_path / "grades" / "gradebook.csv").exists()
    assert sorted(os.listdir(temp)) == []
