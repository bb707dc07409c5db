"""`npformer-oracle grade`'s `--out` folder: a second run started while the first writes
there is refused (one error line, exit 2) instead of replacing or mixing the first's gradebook; a
run stopped by Ctrl-C keeps the submissions it finished, writes no gradebook, and `--resume`
grades only the others (a submission whose files changed since is graded again); an --out that
is a file is refused naming it as given."""
from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from parity_tests.harness.processes import children
from parity_tests.oracle import cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "oracle")
RIGHT = os.path.join(EXAMPLE, "submissions", "alice", "attention.py")
WRONG = os.path.join(EXAMPLE, "submissions", "bob", "attention.py")

SPEC = """[assignment]
name = "Attention"
entry_file = "attention.py"
examples = 3
timeout = 120

[[check]]
name = "mha"
component = "mha"
entry = "MultiHeadAttention"
points = 4
options = { mask_convention = "keep" }
"""


def _ctrl_c_default():
    signal.signal(signal.SIGINT, signal.SIG_DFL)   # as a terminal's job has it


def _class(tmp_path, slow: bool):
    """a_right, b_wrong and z_last (right; with slow, its import sleeps long enough to be stopped
    in). With --jobs 1 they are graded in that order."""
    subs = tmp_path / "subs"
    for name, src in (("a_right", RIGHT), ("b_wrong", WRONG), ("z_last", RIGHT)):
        (subs / name).mkdir(parents=True, exist_ok=True)
        shutil.copy(src, subs / name / "attention.py")
    if slow:
        with open(subs / "z_last" / "attention.py", "a") as fh:
            fh.write("\nimport time\ntime.sleep(100)\n")
    spec = tmp_path / "assignment.toml"
    spec.write_text(SPEC)
    return str(subs), str(spec)


def _start(subs, spec, out, *extra, quiet=True):
    return subprocess.Popen([sys.executable, "-m", "parity_tests.oracle", "grade", subs, "--spec",
                             spec, "--out", out, "--jobs", "1", *extra,
                             *(["--quiet"] if quiet else [])],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=_ctrl_c_default)


def _kill(p):
    if p.poll() is None:
        for w in children(p.pid):
            os.kill(w, signal.SIGKILL)
        p.kill()
        p.wait()


def _wait_for(cond, p, seconds=90):
    deadline = time.monotonic() + seconds
    while not cond() and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    return cond()


def _kept(out) -> int:
    d = os.path.join(out, ".partial")
    return len([n for n in os.listdir(d) if n.endswith(".json") and not n.startswith(".")]) if os.path.isdir(d) else 0


def _gradebook(out) -> dict[str, tuple[str, str]]:
    with open(os.path.join(out, "gradebook.csv"), newline="") as fh:
        return {r["student"]: (r["score"], r["mha"]) for r in csv.DictReader(fh)}


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="reads /proc for the workers")
def test_a_second_grade_into_the_same_out_while_the_first_runs_is_refused(tmp_path):
    subs, spec = _class(tmp_path, slow=True)
    out = str(tmp_path / "grades")
    first = _start(subs, spec, out)
    try:
        assert _wait_for(lambda: children(first.pid), first), first.communicate()
        second = _start(subs, spec, out, "--overwrite")
        try:                                          # refused at once, before any grading
            _, err = second.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail("a second grade into the same --out was not refused: it started grading")
        finally:
            _kill(second)
        assert second.returncode == 2, err
        assert "--out" in err and "another grade run is writing into this folder" in err, err
        assert "Traceback" not in err
        assert first.poll() is None                   # the first is left to run
    finally:
        _kill(first)


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="reads /proc for the workers")
def test_a_stopped_grade_keeps_what_it_finished_and_resume_grades_only_the_others(tmp_path):
    subs, spec = _class(tmp_path, slow=True)
    out = str(tmp_path / "grades")
    p = _start(subs, spec, out, quiet=False)              # with its progress bar
    try:
        assert _wait_for(lambda: _kept(out) == 2, p), p.communicate()
        os.killpg(p.pid, signal.SIGINT)               # a terminal's Ctrl-C: the whole group
        _, err = p.communicate(timeout=120)
    finally:
        _kill(p)
    assert p.returncode == 130, err
    assert "Traceback" not in err, err
    lines = err.replace("\r", "\n").splitlines()          # the bar closed: a line of its own
    assert any(line.startswith("npformer-oracle: 2 submission(s) finished before the stop are "
                               "kept") and "--resume" in line for line in lines), err
    assert not os.path.exists(os.path.join(out, "gradebook.csv"))   # nothing looks complete
    assert not os.path.exists(os.path.join(out, "summary.json"))

    again = subprocess.run([sys.executable, "-m", "parity_tests.oracle", "grade", subs, "--spec",
                            spec, "--out", out, "--quiet"],
                           cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert again.returncode == 2, again.stderr
    assert "--resume" in again.stderr and "interrupted run" in again.stderr, again.stderr

    shutil.copy(RIGHT, os.path.join(subs, "z_last", "attention.py"))    # the slow one, fixed
    shutil.copy(RIGHT, os.path.join(subs, "b_wrong", "attention.py"))   # changed since: regraded
    res = subprocess.run([sys.executable, "-m", "parity_tests.oracle", "grade", subs, "--spec",
                          spec, "--out", out, "--resume"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "1 submission(s) graded by the interrupted run are kept; grading the other 2" \
        in res.stderr, res.stderr
    assert _gradebook(out) == {"a_right": ("4", "match"), "b_wrong": ("4", "match"),
                               "z_last": ("4", "match")}
    assert not os.path.exists(os.path.join(out, ".partial"))


def _forged(out, student):
    """A record for `student` that no run of this spec and these files wrote: full marks."""
    d = os.path.join(out, ".partial")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "forged.json"), "w") as fh:
        json.dump({"student": student, "key": "0" * 64, "graded": {
            "student": student, "path": student, "score": 4.0, "intact": True, "checks": [
                {"name": "mha", "verdict": "match", "exit_code": 0, "points": 4.0,
                 "max_points": 4.0, "message": "", "quantity": None, "report": None}]}}, fh)


@pytest.mark.parametrize("flag", ["--resume", "--overwrite"])
def test_a_record_of_other_files_is_never_taken_and_overwrite_discards_the_records(
        tmp_path, capsys, flag):
    subs, spec = _class(tmp_path, slow=False)
    shutil.rmtree(os.path.join(subs, "a_right"))
    shutil.rmtree(os.path.join(subs, "z_last"))
    out = str(tmp_path / "grades")
    _forged(out, "b_wrong")
    assert cli.main(["grade", subs, "--spec", spec, "--out", out, "--quiet", flag]) == 0
    assert _gradebook(out) == {"b_wrong": ("0", "mismatch")}        # graded, not the record's 4
    assert not os.path.exists(os.path.join(out, ".partial"))
    assert "kept" not in capsys.readouterr().err


def test_an_out_that_is_a_file_is_named_as_given(tmp_path, capsys):
    subs, spec = _class(tmp_path, slow=False)
    out = tmp_path / "grades.txt"
    out.write_text("notes")
    assert cli.main(["grade", subs, "--spec", spec, "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"--out {str(out)!r}: expected a folder (made when missing), got a file" in err, err
    assert out.read_text() == "notes"
