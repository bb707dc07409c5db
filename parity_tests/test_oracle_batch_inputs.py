"""Batch grading fails one student, never the class: a student folder that is a link to a
classmate's (graded 0 as a link, never given the classmate's grade), a folder name carrying
terminal escape codes (cleaned in the gradebook, the summary, the output folders and on the
terminal), a 1 GiB sparse file (that student's load_error, measured before reading), a link
inside a folder; the other students' grades are those they get alone.
"""
from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys

import pytest

from parity_tests.oracle.grading.batch import grade
from parity_tests.oracle.grading.submissions import SubmissionError, read_submission

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOSTILE = os.path.join(ROOT, "parity_tests", "oracle_hostile")
ESC = "eve\x1b[2J\x1b[1;1HMATCH\x07"

SPEC = """
[assignment]
name = "attention"
entry_file = "attention.py"
examples = 3
seed = 3
timeout = 5
require = ["masks", "cross_attention", "parameters", "eps"]   # NumPy forward-only: no gradients

[[check]]
name = "sdpa"
component = "sdpa"
entry = "attention"
points = 10
"""


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("inputs")
    subs = base / "subs"
    for student in ("ann_right", ESC):
        (subs / student).mkdir(parents=True)
        shutil.copy(os.path.join(HOSTILE, "right.py"), subs / student / "attention.py")
    os.symlink(subs / "ann_right", subs / "bob_linked")            # a classmate's folder
    (subs / "cy_sparse").mkdir()
    shutil.copy(os.path.join(HOSTILE, "right.py"), subs / "cy_sparse" / "attention.py")
    with open(subs / "cy_sparse" / "data.bin", "wb") as f:        # 1 GiB, sparse: no disk used
        f.truncate(1 << 30)
    (subs / "dee_inner_link").mkdir()
    shutil.copy(os.path.join(HOSTILE, "right.py"), subs / "dee_inner_link" / "attention.py")
    os.symlink(subs / "ann_right" / "attention.py", subs / "dee_inner_link" / "helper.py")
    (base / "assignment.toml").write_text(SPEC)
    p = subprocess.run([sys.executable, "-m", "parity_tests.oracle", "grade", str(subs), "--spec",
                        str(base / "assignment.toml"), "--out", str(base / "out") + os.sep, "--jobs", "2"],
                       capture_output=True, text=True, timeout=600, cwd=base,
                       env={**os.environ, "PYTHONPATH": ROOT})
    assert p.returncode == 0, p.stdout + p.stderr
    with open(base / "out" / "gradebook.csv", newline="") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    return base, p, rows


def test_the_class_is_graded_and_the_right_student_keeps_full_marks(graded):
    base, p, rows = graded
    # --out given with a trailing separator: the path printed is the file's own, no "//"
    assert f"wrote {base / 'out' / 'gradebook.csv'}, summary.json" in p.stdout, p.stdout
    assert float(rows["ann_right"]["score"]) == 10.0


def test_a_linked_student_gets_zero_as_a_link(graded):
    base, _, rows = graded
    assert float(rows["bob_linked"]["score"]) == 0.0 and rows["bob_linked"]["sdpa"] == "load_error"
    res = json.loads((base / "out" / "bob_linked" / "results.json").read_text())
    assert "is a link" in res["tests"][0]["output"]


@pytest.mark.parametrize("student,why", [("cy_sparse", "larger than 16 MiB"),
                                         ("dee_inner_link", "is a link")])
def test_odd_files_fail_that_student_only(graded, student, why):
    base, _, rows = graded
    assert rows[student]["sdpa"] == "load_error"
    res = json.loads((base / "out" / student / "results.json").read_text())
    assert why in res["tests"][0]["output"]


def test_escape_codes_in_a_name_reach_no_terminal_csv_or_folder(graded):
    base, p, rows = graded
    clean = "eve?[2J?[1;1HMATCH?"
    assert clean in rows and float(rows[clean]["score"]) == 10.0
    assert "\x1b" not in p.stdout + p.stderr and "\x07" not in p.stdout + p.stderr
    assert "\x1b" not in (base / "out" / "gradebook.csv").read_text()
    assert "\x1b" not in (base / "out" / "summary.json").read_text()
    assert sorted(os.listdir(base / "out")) == sorted(
        ["ann_right", "bob_linked", "cy_sparse", "dee_inner_link", clean, "gradebook.csv",
         "summary.json"])


def test_a_single_file_over_the_limit_is_refused_not_cut(tmp_path):
    big = tmp_path / "big.py"
    with open(big, "wb") as f:
        f.truncate((16 << 20) + 1)
    with pytest.raises(SubmissionError, match="larger than 16 MiB"):
        read_submission(str(big), "attention.py")


@pytest.mark.parametrize("where", ["same", "inside"])
def test_grades_may_not_be_written_over_or_into_the_submissions(tmp_path, where):
    subs = tmp_path / "subs"
    (subs / "ann").mkdir(parents=True)
    shutil.copy(os.path.join(HOSTILE, "right.py"), subs / "ann" / "attention.py")
    (tmp_path / "assignment.toml").write_text(SPEC)
    out = subs if where == "same" else subs / "grades"
    with pytest.raises(ValueError, match="overlaps the submissions folder"):
        grade(str(subs), str(tmp_path / "assignment.toml"), str(out))
    assert sorted(os.listdir(subs)) == ["ann"] and os.listdir(subs / "ann") == ["attention.py"]


def test_the_bundle_never_replaces_its_own_spec(tmp_path):
    from parity_tests.oracle.grading.gradescope import build_bundle
    spec = tmp_path / "assignment.toml"
    spec.write_text(SPEC)
    with pytest.raises(ValueError, match="input of the bundle"):
        build_bundle(str(spec), str(spec), force=True)
    assert spec.read_text() == SPEC
