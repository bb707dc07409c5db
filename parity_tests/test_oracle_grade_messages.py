"""The messages a student reads in results.json name the submission's own files ("model.py"),
never the private copy the grader made of them (`/tmp/oracle-sub-<run>-<random>/model.py`: a path
that differs at every run and means nothing to the student)."""
from __future__ import annotations

import json

from parity_tests.oracle import cli

SPEC = """[assignment]
entry_file = "model.py"
examples = 2

[[check]]
component = "layernorm"
entry = "LayerNorm"
"""


def test_a_load_error_names_the_students_file_not_the_private_copy(tmp_path, capsys):
    (tmp_path / "subs" / "noload").mkdir(parents=True)
    (tmp_path / "subs" / "noload" / "model.py").write_text("class LayerNorm(:\n    pass\n")
    (tmp_path / "a.toml").write_text(SPEC)
    out = tmp_path / "grades"
    assert cli.main(["grade", str(tmp_path / "subs"), "--spec", str(tmp_path / "a.toml"),
                     "--out", str(out), "--quiet"]) == 0
    res = json.loads((out / "noload" / "results.json").read_text())
    text = res["tests"][0]["output"]
    assert text.startswith("load_error: candidate: importing 'model.py' raised SyntaxError"), text
    assert "oracle-sub-" not in json.dumps(res)


def test_the_gradescope_run_names_the_students_file_too(tmp_path, capsys):
    (tmp_path / "submission").mkdir()
    (tmp_path / "submission" / "model.py").write_text("class LayerNorm(:\n    pass\n")
    (tmp_path / "a.toml").write_text(SPEC)
    results = tmp_path / "results.json"
    assert cli.main(["gradescope-run", str(tmp_path / "a.toml"), "--submission",
                     str(tmp_path / "submission"), "--results", str(results)]) == 0
    res = json.loads(results.read_text())
    text = res["tests"][0]["output"]
    assert text.startswith("load_error: candidate: importing 'model.py' raised SyntaxError"), text
    assert "/tmp/" not in json.dumps(res)
