"""The README's grading commands run as written on the example the repository ships
(examples/oracle: a spec and two students' attention files): `check` matches the right one and
writes its results, `grade` gives the right student full marks and the other none, and
`gradescope-bundle` packs the spec."""
from __future__ import annotations

import json
import os
import zipfile

import pytest

pytest.importorskip("torch")

from parity_tests.oracle.cli import main  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "oracle")


def test_check_matches_the_right_submission_and_writes_results(tmp_path, capsys):
    out = tmp_path / "results.json"
    code = main(["check", "mha", os.path.join(EXAMPLE, "submissions", "alice", "attention.py:MultiHeadAttention"),
                 "--examples", "8", "--results", str(out)])
    assert code == 0, capsys.readouterr()
    assert json.loads(out.read_text())["score"] > 0


def test_grade_scores_the_shipped_class(tmp_path, capsys):
    out = tmp_path / "grades"
    code = main(["grade", os.path.join(EXAMPLE, "submissions"), "--spec",
                 os.path.join(EXAMPLE, "assignment.toml"), "--jobs", "1", "--out", str(out)])
    assert code == 0, capsys.readouterr()
    rows = (out / "gradebook.csv").read_text().splitlines()
    assert rows[1:] == ["alice,15,15,graded,match,match", "bob,0,15,graded,mismatch,mismatch"], rows


def test_the_shipped_spec_declares_its_mask_convention():
    from parity_tests.oracle.grading.spec import check_options, load_spec
    spec = load_spec(os.path.join(EXAMPLE, "assignment.toml"))
    assert all("mask_convention" in check_options(spec, c).declared for c in spec.checks)
    assert "mask_convention" in spec.require


def test_the_spec_bundles(tmp_path, capsys):
    bundle = tmp_path / "autograder.zip"
    assert main(["gradescope-bundle", os.path.join(EXAMPLE, "assignment.toml"), "-o", str(bundle)]) == 0, \
        capsys.readouterr()
    assert "assignment.toml" in " ".join(zipfile.ZipFile(bundle).namelist())
