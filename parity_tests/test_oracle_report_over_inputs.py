"""`npformer-oracle check --report/--results PATH` and `verify --report PATH` never write over the
run's own inputs: `check mha student.py:MHA --report student.py` replaced the submission being
graded with the JSON report. A report path that is the submission, its adapter or map file, the
outputs being verified or a file of the bundle, or the same path as the other report, is refused
before the search, naming both; the input is left byte for byte."""
from __future__ import annotations

import numpy as np
import pytest

from parity_tests.oracle.cli import main

SUBMISSION = "import numpy as np\n\ndef attention(q, k, v, mask=None):\n    raise ValueError('x')\n"


def refused(capsys, argv, *needles):
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2 and out == "", out + err
    assert len(err.strip().splitlines()) == 1, err
    for n in needles:
        assert n in err, (n, err)


@pytest.mark.parametrize("flag", ["--report", "--results"])
def test_a_report_over_the_submission_is_refused(tmp_path, capsys, flag):
    student = tmp_path / "student.py"
    student.write_text(SUBMISSION)
    refused(capsys, ["check", "sdpa", f"{student}:attention", "--examples", "1", flag,
                     str(student)], flag, "the submission")
    assert student.read_text() == SUBMISSION


def test_a_report_over_the_adapter_or_map_file_is_refused(tmp_path, capsys):
    student, adapter, mapping = (tmp_path / "student.py", tmp_path / "adapter.py",
                                 tmp_path / "map.json")
    student.write_text(SUBMISSION)
    adapter.write_text("# hooks\n")
    mapping.write_text("{}")
    refused(capsys, ["check", "sdpa", f"{student}:attention", "--adapter", str(adapter),
                     "--report", str(adapter)], "--report", "--adapter")
    refused(capsys, ["check", "sdpa", f"{student}:attention", "--map-file", str(mapping),
                     "--results", str(mapping)], "--results", "--map-file")
    assert adapter.read_text() == "# hooks\n" and mapping.read_text() == "{}"


def test_report_and_results_on_one_path_are_refused(tmp_path, capsys):
    student = tmp_path / "student.py"
    student.write_text(SUBMISSION)
    out = tmp_path / "out.json"
    refused(capsys, ["check", "sdpa", f"{student}:attention", "--report", str(out), "--results",
                     str(out)], "--results", "--report")
    assert not out.exists()


def test_verify_report_over_its_outputs_or_bundle_files_is_refused(tmp_path, capsys):
    bundle = tmp_path / "b"
    assert main(["export", "layernorm", "--out", str(bundle), "--examples", "1"]) == 0
    capsys.readouterr()
    outputs = tmp_path / "outputs.npz"
    np.savez(outputs, x=np.zeros(1))
    before = outputs.read_bytes()
    refused(capsys, ["verify", str(bundle), str(outputs), "--report", str(outputs)],
            "--report", "outputs")
    assert outputs.read_bytes() == before
    manifest = (bundle / "manifest.json").read_text()
    refused(capsys, ["verify", str(bundle), str(outputs), "--report",
                     str(bundle / "manifest.json")], "--report", "bundle")
    assert (bundle / "manifest.json").read_text() == manifest


def test_export_refuses_a_folder_holding_a_bundle_unless_overwrite(tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "manifest.json").write_text("mine")
    refused(capsys, ["export", "layernorm", "--out", str(out), "--examples", "1"], "--out",
            "manifest.json", "--overwrite")
    assert (out / "manifest.json").read_text() == "mine"
    assert main(["export", "layernorm", "--out", str(out), "--examples", "1", "--overwrite"]) == 0
    assert (out / "manifest.json").read_text() != "mine"
