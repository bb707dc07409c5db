"""What an instructor's own files and spec mistakes do to `grade`: a spec without `entry_file` reads
`submission.py`, and when no student has it the summary says to look at the spec's entry_file
(every student a load error is more likely the spec's mistake); a student's
`OUT/<student>/results.json` or `report.json` left by an earlier run (perhaps hand-corrected) is
kept unless `--overwrite`, like the gradebook."""
from __future__ import annotations

import json
import os
import re
import shutil

import pytest

from parity_tests.conftest import oracle_refusal
from parity_tests.oracle.grading.spec import SpecError, load_spec

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RIGHT = os.path.join(ROOT, "parity_tests", "oracle_hostile", "right.py")
CHECK = '\n[[check]]\nname = "sdpa"\ncomponent = "sdpa"\nentry = "attention"\npoints = 10\n'
SPEC = ('[assignment]\nname = "attention"\nentry_file = "attention.py"\nexamples = 2\ntimeout = 5\n'
        + CHECK)
MINE = '{"score": 10, "note": "hand-corrected"}\n'


def test_a_spec_without_entry_file_reads_the_default_file(tmp_path):
    spec = tmp_path / "assignment.toml"
    spec.write_text('[assignment]\nname = "attention"\n' + CHECK)
    assert load_spec(str(spec)).entry_file == "submission.py"


def test_grade_without_entry_file_nobody_has_says_so(tmp_path, capsys):
    # the default entry file no student submitted: every one a load error, and the summary asks
    # whether the spec's entry_file is what the students submitted
    from parity_tests.oracle.cli import main
    subs = tmp_path / "subs"
    for who in ("ann", "bo"):
        (subs / who).mkdir(parents=True)
        shutil.copy(RIGHT, subs / who / "attention.py")
    spec = tmp_path / "assignment.toml"
    spec.write_text('[assignment]\nname = "attention"\nexamples = 2\ntimeout = 5\n' + CHECK)
    main(["grade", str(subs), "--spec", str(spec), "--out", str(tmp_path / "grades")])
    assert "is the spec's entry_file or entry" in capsys.readouterr().out
    summary = json.loads((tmp_path / "grades" / "summary.json").read_text())
    assert summary["load_error_everywhere"], summary


@pytest.mark.parametrize("name", ["results.json", "report.json"])
def test_grade_keeps_a_students_earlier_file_unless_overwrite(tmp_path, capsys, name):
    subs = tmp_path / "subs"
    (subs / "Ana María").mkdir(parents=True)
    shutil.copy(RIGHT, subs / "Ana María" / "attention.py")
    spec = tmp_path / "assignment.toml"
    spec.write_text(SPEC)
    out = tmp_path / "grades"
    (out / "Ana María").mkdir(parents=True)
    (out / "Ana María" / name).write_text(MINE)
    argv = ["grade", str(subs), "--spec", str(spec), "--out", str(out), "--quiet"]
    oracle_refusal(capsys, argv, "--out", f"Ana María/{name}", "--overwrite")
    assert (out / "Ana María" / name).read_text() == MINE
    assert os.listdir(out) == ["Ana María"] and os.listdir(out / "Ana María") == [name]


def test_a_student_folder_the_class_does_not_have_is_left_alone(tmp_path):
    from parity_tests.oracle.grading.batch import grade

    subs = tmp_path / "subs"
    (subs / "ann").mkdir(parents=True)
    shutil.copy(RIGHT, subs / "ann" / "attention.py")
    spec = tmp_path / "assignment.toml"
    spec.write_text(SPEC)
    out = tmp_path / "grades"
    (out / "notes").mkdir(parents=True)
    (out / "notes" / "results.json").write_text(MINE)      # not a student's: not the run's
    grade(str(subs), str(spec), str(out), quiet=True)
    assert (out / "notes" / "results.json").read_text() == MINE
    assert (out / "ann" / "results.json").exists()


def test_what_is_neither_a_folder_nor_a_py_file_is_named_in_the_summary(tmp_path, capsys):
    from parity_tests.oracle.cli import main

    subs = tmp_path / "subs"
    (subs / "ann").mkdir(parents=True)
    shutil.copy(RIGHT, subs / "ann" / "attention.py")
    (subs / "bo hw3.zip").write_bytes(b"PK\x03\x04")        # a student who uploaded an archive
    (subs / "roster.txt").write_text("ann\nbo\n")
    (subs / ".DS_Store").write_bytes(b"")                    # hidden: not worth a word
    spec = tmp_path / "assignment.toml"
    spec.write_text(SPEC)
    out = tmp_path / "grades"
    assert main(["grade", str(subs), "--spec", str(spec), "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "not graded, neither a folder nor a .py file: bo hw3.zip, roster.txt" in printed, printed
    summary = json.loads((out / "summary.json").read_text())
    assert summary["ignored"] == ["bo hw3.zip", "roster.txt"] and summary["students"] == 1


@pytest.mark.parametrize("entry", ["mha/layer.py", "layer.MultiHeadAttention()"])
def test_an_entry_that_is_not_a_name_says_how_to_name_another_file(tmp_path, entry):
    spec = tmp_path / "assignment.toml"
    spec.write_text(SPEC.replace('entry = "attention"', f'entry = "{entry}"'))
    with pytest.raises(SpecError, match=r"#1 entry: expected a Python name .*\"file\.py:Name\".*got "
                       + re.escape(repr(entry))):
        load_spec(str(spec))


def test_a_spec_entry_no_student_has_is_pointed_out(tmp_path, capsys):
    from parity_tests.oracle.cli import main

    subs = tmp_path / "subs"
    for s in ("ann", "bo"):
        (subs / s).mkdir(parents=True)
        shutil.copy(RIGHT, subs / s / "attention.py")
    spec = tmp_path / "assignment.toml"
    spec.write_text(SPEC.replace('entry = "attention"', 'entry = "atention"'))   # a typo
    out = tmp_path / "grades"
    assert main(["grade", str(subs), "--spec", str(spec), "--out", str(out), "--quiet"]) == 0
    assert "no submission loaded: is the spec's entry_file or entry" in capsys.readouterr().out
    assert json.loads((out / "summary.json").read_text())["load_error_everywhere"] == ["sdpa"]
    spec.write_text(SPEC)
    assert main(["grade", str(subs), "--spec", str(spec), "--out", str(out), "--quiet",
                 "--overwrite"]) == 0
    assert "no submission loaded" not in capsys.readouterr().out
    assert json.loads((out / "summary.json").read_text())["load_error_everywhere"] == []


@pytest.mark.parametrize("what", ["file", "missing"])
def test_submissions_that_is_not_a_folder_says_what_it_is(tmp_path, capsys, what):
    spec = tmp_path / "assignment.toml"
    spec.write_text(SPEC)
    subs = tmp_path / "ann.py"
    if what == "file":
        shutil.copy(RIGHT, subs)
    argv = ["grade", str(subs), "--spec", str(spec), "--out", str(tmp_path / "grades")]
    oracle_refusal(capsys, argv, "SUBMISSIONS", "expected a folder of submissions",
                   "got a file" if what == "file" else "got nothing (no such path)")
    assert not (tmp_path / "grades").exists()


def test_a_missing_entry_file_says_what_the_submission_holds(tmp_path):
    from parity_tests.oracle.grading.batch import grade

    subs = tmp_path / "subs"
    (subs / "ann" / "hw3").mkdir(parents=True)                  # an archive unpacked one deeper
    shutil.copy(RIGHT, subs / "ann" / "hw3" / "attention.py")
    (subs / "bo").mkdir()
    shutil.copy(RIGHT, subs / "bo" / "attn.py")                  # another name
    (subs / "cy").mkdir()
    (subs / "cy" / "answer.txt").write_text("see attached")
    spec = tmp_path / "assignment.toml"
    spec.write_text(SPEC)
    res = grade(str(subs), str(spec), str(tmp_path / "grades"), quiet=True)
    said = {g["student"]: g["checks"][0]["message"] for g in res["graded"]}
    assert said["ann"] == ("no file 'attention.py' in the submission; found 'hw3/attention.py': "
                           "the spec reads 'attention.py'"), said
    assert said["bo"] == "no file 'attention.py' in the submission; its .py files: attn.py", said
    assert said["cy"] == "no file 'attention.py' in the submission; it holds no .py file", said
