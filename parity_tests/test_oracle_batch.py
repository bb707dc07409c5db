"""Batch grading (`npformer-oracle grade`) and the Gradescope bundle.

A class of eleven submissions - right ones, wrong ones, and hostile ones that kill themselves, loop,
patch modules, exit at import, fork and rewrite files, import the reference, or vandalise the other
submissions being graded - graded with --jobs 2: every student's grade equals the grade of that
submission graded alone. The bundle's run_autograder, run against a local /autograder-shaped tree,
writes a results.json with the same score as `grade`.
"""
from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle.grading.batch import grade, grade_one
from parity_tests.oracle.grading.spec import SpecError, load_spec

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOSTILE = os.path.join(ROOT, "parity_tests", "oracle_hostile")
CANDIDATES = candidate_path()

SPEC = """
[assignment]
name = "attention"
entry_file = "attention.py"
examples = 6
seed = 3
timeout = 3
runs = 2
# a NumPy forward-only assignment: every requirement but gradients (which it cannot give)
require = ["masks", "cross_attention", "parameters", "eps"]

[[check]]
name = "sdpa"
component = "sdpa"
entry = "attention"
points = 10
hidden = {{ seed = 99, examples = 4, points = 5 }}
"""

WRONG = ("import numpy as np\n\ndef attention(Q, K, V, mask=None):\n"
         "    s = Q @ np.swapaxes(K, -1, -2)\n"          # no 1/sqrt(d): wrong
         "    if mask is not None:\n        s = np.where(mask == 0, -1e9, s)\n"
         "    w = np.exp(s - s.max(-1, keepdims=True))\n    w = w / w.sum(-1, keepdims=True)\n"
         "    return w @ V, w\n")

CLASS = {   # student -> hostile file (copied as the student's attention.py), or source text
    "ada_right": "right.py", "bob_right": "right.py", "cy_wrong": WRONG, "dee_kill": "kill_self.py",
    "eve_loop": "loops.py", "fay_patch": "patch_modules.py", "gus_exit": "exit_at_import.py",
    "hal_fork": "fork_atexit.py", "ivy_import": "imports_reference.py", "jo_vandal": "vandal.py",
    "kim_bigbug": "big_bug.py",
}


def make_class(folder):
    for student, what in CLASS.items():
        d = folder / student
        d.mkdir(parents=True)
        if what.endswith(".py"):
            shutil.copy(os.path.join(HOSTILE, what), d / "attention.py")
        else:
            (d / "attention.py").write_text(what)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("class")
    subs = base / "subs"
    make_class(subs)
    spec = base / "assignment.toml"
    spec.write_text(SPEC.format())
    res = grade(str(subs), str(spec), str(base / "out"), jobs=2, quiet=True)
    return base, subs, spec, res


def test_every_grade_equals_the_grade_alone(graded):
    base, subs, spec, res = graded
    a = load_spec(str(spec))
    by = {g["student"]: g for g in res["graded"]}
    assert set(by) == set(CLASS)
    for student in CLASS:
        alone = grade_one(a, student, str(subs / student / "attention.py"))
        got = by[student]
        assert got["score"] == alone["score"], (student, got["checks"], alone["checks"])
        assert [c["verdict"] for c in got["checks"]] == [c["verdict"] for c in alone["checks"]], \
            student
    assert by["ada_right"]["score"] == by["bob_right"]["score"] == a.max_score == 15
    for student in CLASS:
        if "right" not in student:
            assert by[student]["score"] == 0, (student, by[student]["checks"])


def test_files_gradebook_and_summary(graded):
    base, subs, spec, res = graded
    out = base / "out"
    rows = list(csv.DictReader((out / "gradebook.csv").open()))
    assert {r["student"] for r in rows} == set(CLASS)
    for r in rows:
        results = json.loads((out / r["student"] / "results.json").read_text())
        assert float(r["score"]) == results["score"]
        report = json.loads((out / r["student"] / "report.json").read_text())
        assert report["score"] == results["score"]
    summ = json.loads((out / "summary.json").read_text())
    assert summ["students"] == len(CLASS)
    assert sum(summ["score_distribution"].values()) == len(CLASS)
    assert summ["most_common_failure"]
    verdicts = {r["student"]: r["sdpa"] for r in rows}
    assert verdicts["dee_kill"] == "crashed" and verdicts["eve_loop"] == "timeout"
    assert verdicts["ivy_import"] == "forbidden_import"


def test_bad_spec_is_a_clear_error(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text('[assignment]\nexamples = 0\n[[check]]\ncomponent = "sdpa"\nentry = "f"\n')
    with pytest.raises(SpecError, match="examples"):
        load_spec(str(p))
    p.write_text('[[check]]\ncomponent = "attention"\nentry = "f"\n')
    with pytest.raises(SpecError, match="component"):
        load_spec(str(p))


def build_bundle(tmp_path) -> Path:
    spec = tmp_path / "assignment.toml"
    spec.write_text(SPEC.format())
    z = tmp_path / "autograder.zip"
    p = subprocess.run([sys.executable, "-m", "parity_tests.oracle", "gradescope-bundle",
                        str(spec), "-o", str(z)], env=dict(os.environ, PYTHONPATH=ROOT),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return z


def run_bundle(z: Path, tmp_path, student: str, what: str) -> dict:
    """Gradescope's steps on a local tree: unpack the bundle into source/, the student's file into
    submission/, run run_autograder, read results/results.json."""
    ag = tmp_path / f"autograder_{student}"
    (ag / "source").mkdir(parents=True)
    (ag / "submission").mkdir()
    (ag / "results").mkdir()
    with zipfile.ZipFile(z) as zf:
        names = zf.namelist()
        assert "setup.sh" in names and "run_autograder" in names
        zf.extractall(ag / "source")
    if what.endswith(".py"):
        shutil.copy(os.path.join(HOSTILE, what), ag / "submission" / "attention.py")
        shutil.copy(os.path.join(HOSTILE, "unguard.py"), ag / "submission")  # imported by some
    else:
        (ag / "submission" / "attention.py").write_text(what)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(AUTOGRADER_ROOT=str(ag), PYTHON=sys.executable)
    p = subprocess.run(["bash", str(ag / "source" / "run_autograder")], env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads((ag / "results" / "results.json").read_text())


def test_gradescope_bundle_runs_against_a_local_autograder_tree(tmp_path):
    z = build_bundle(tmp_path)
    again = subprocess.run([sys.executable, "-m", "parity_tests.oracle", "gradescope-bundle",
                            str(tmp_path / "assignment.toml"), "-o", str(z)],
                           env=dict(os.environ, PYTHONPATH=ROOT), capture_output=True, text=True)
    assert again.returncode == 2 and "--force" in again.stderr       # never silently replaced
    for student, expected in (("ada_right", 15), ("cy_wrong", 0)):
        res = run_bundle(z, tmp_path, student, CLASS[student])
        assert res["score"] == expected, res


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    """One bundle for the tests that only run it (each unpacks it into a tree of its own); building
    it is tested above, where the bundle is the subject."""
    return build_bundle(tmp_path_factory.mktemp("bundle"))


@pytest.mark.parametrize("hostile", ["claims_no_masks.py", "no_mask_argument.py", "reads_project.py",
                                     "ref_from_source.py", "imports_reference.py"])
def test_hostile_submissions_never_get_full_marks_in_the_bundle(bundle, tmp_path, hostile):
    """The Gradescope bundle grades through the same parent-side checks as `grade`: a submission
    that lies about what it supports, leaves the mask out of its signature or reaches for the
    reference scores less than full marks there too, with a reason in its results."""
    res = run_bundle(bundle, tmp_path, hostile[:-3], hostile)
    assert res["score"] < 15, res
    assert any(t.get("output") for t in res.get("tests", [])), res


@pytest.mark.parametrize("names", [("gradebook.csv.py", "ann.py"), ("summary.json", "ann.py"),
                                   ("ann", "ann.py")])
def test_a_submission_named_like_the_gradebook_or_twice_is_refused_before_grading(tmp_path, names):
    """A file `gradebook.csv.py` used to become OUT/gradebook.csv/ (a folder): every student was
    graded, then writing the gradebook failed with a traceback and no gradebook at all."""
    subs = tmp_path / "subs"
    subs.mkdir()
    for n in names:
        if n.endswith(".py"):
            (subs / n).write_text(WRONG)
        else:
            (subs / n).mkdir()
            (subs / n / "attention.py").write_text(WRONG)
    spec = tmp_path / "assignment.toml"
    spec.write_text(SPEC.format())
    with pytest.raises(ValueError, match="SUBMISSIONS"):
        grade(str(subs), str(spec), str(tmp_path / "out"), jobs=1, quiet=True)
    assert not (tmp_path / "out").exists()
