"""An instructor's earlier files are never silently replaced: `check --report/--results FILE`,
`verify --report FILE` and `grade --out DIR` (a folder already holding a gradebook) are refused
before any search when the file is there, naming the option and `--overwrite`; the file is left
byte for byte, and with `--overwrite` the run replaces it. A spec given positionally
(`gradescope-bundle SPEC`, `gradescope-run SPEC`) is named as `spec` in its errors, not as a
`--spec` option that command does not have."""
from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest

from parity_tests.conftest import oracle_refusal
from parity_tests.oracle.cli import main
from parity_tests.oracle.grading.batch import grade

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RIGHT = os.path.join(ROOT, "parity_tests", "oracle_hostile", "right.py")
MINE = '{"mine": "an earlier report, perhaps edited"}\n'
SPEC = """
[assignment]
name = "attention"
entry_file = "attention.py"
examples = 2
seed = 3
timeout = 5
require = ["masks", "cross_attention", "parameters", "eps"]

[[check]]
name = "sdpa"
component = "sdpa"
entry = "attention"
points = 10
"""


@pytest.mark.parametrize("flag", ["--report", "--results"])
def test_check_keeps_an_existing_report_unless_overwrite(tmp_path, capsys, flag):
    earlier = tmp_path / "earlier.json"
    earlier.write_text(MINE)
    argv = ["check", "sdpa", f"{RIGHT}:attention", "--examples", "2", "--runs", "1", flag,
            str(earlier)]
    oracle_refusal(capsys, argv, flag, "exists", "--overwrite")
    assert earlier.read_text() == MINE
    assert main(argv + ["--overwrite"]) in (0, 1), capsys.readouterr()   # a verdict, written
    assert "mine" not in json.loads(earlier.read_text())


def test_verify_keeps_an_existing_report_unless_overwrite(tmp_path, capsys):
    bundle = tmp_path / "bundle"
    assert main(["export", "layernorm", "--out", str(bundle), "--examples", "1"]) == 0
    outputs = tmp_path / "outputs.npz"
    np.savez(outputs, x=np.zeros(1))
    earlier = tmp_path / "earlier.json"
    earlier.write_text(MINE)
    capsys.readouterr()
    argv = ["verify", str(bundle), str(outputs), "--report", str(earlier)]
    oracle_refusal(capsys, argv, "--report", "exists", "--overwrite")
    assert earlier.read_text() == MINE
    main(argv + ["--overwrite"])
    assert "mine" not in json.loads(earlier.read_text())


def test_grade_keeps_an_earlier_gradebook_unless_overwrite(tmp_path):
    subs = tmp_path / "subs"
    (subs / "ann").mkdir(parents=True)
    shutil.copy(RIGHT, subs / "ann" / "attention.py")
    spec = tmp_path / "assignment.toml"
    spec.write_text(SPEC)
    out = tmp_path / "grades"
    out.mkdir()
    (out / "gradebook.csv").write_text("student,score\nann,10 (hand-corrected)\n")
    with pytest.raises(ValueError, match=r"--out .*gradebook\.csv.*--overwrite"):
        grade(str(subs), str(spec), str(out), quiet=True)
    assert (out / "gradebook.csv").read_text() == "student,score\nann,10 (hand-corrected)\n"
    assert sorted(os.listdir(out)) == ["gradebook.csv"]          # nothing graded or written
    grade(str(subs), str(spec), str(out), quiet=True, overwrite=True)
    assert "hand-corrected" not in (out / "gradebook.csv").read_text()


@pytest.mark.parametrize("command", ["gradescope-bundle", "gradescope-run"])
def test_a_positional_spec_is_named_as_given(tmp_path, capsys, command):
    missing = str(tmp_path / "nope.toml")
    extra = (["-o", str(tmp_path / "b.zip")] if command == "gradescope-bundle" else
             ["--submission", str(tmp_path), "--results", str(tmp_path / "r.json")])
    err = oracle_refusal(capsys, [command, missing, *extra], "spec '", "no such file")
    assert "--spec" not in err, err
    bad = tmp_path / "bad.toml"
    bad.write_text("x\n")
    err = oracle_refusal(capsys, [command, str(bad), *extra], "spec '", "not valid TOML")
    assert "--spec" not in err, err
