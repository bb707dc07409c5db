"""A checkpoint (or model folder) named by a relative path that is not there says which folder it was
looked for in, as a missing `--data` path does: run from another folder than training, `generate
run.npz ...` said only `checkpoint run.npz: no such file`."""
from __future__ import annotations

from npformer.cli.main import main


def test_a_missing_relative_checkpoint_names_the_current_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for argv, named in ((["generate", "run.npz", "abc"], "checkpoint"),
                        (["evaluate", "run.npz"], "checkpoint"),
                        (["train", "--resume", "run.npz", "--steps", "1"], "--resume")):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert err.endswith(f": {named} run.npz: no such file (a relative path is read from the "
                            f"current folder, {tmp_path})"), err


def test_a_resume_file_that_is_no_checkpoint_is_named_by_the_option(tmp_path, capsys):
    text = tmp_path / "notes.txt"
    text.write_text("not a checkpoint\n")
    for given, problem in ((text, "not an .npz checkpoint"), (tmp_path, "is a folder, not a checkpoint file")):
        assert main(["train", "--resume", str(given), "--steps", "1"]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"npformer train: error: --resume {given}: {problem}"), err


def test_an_absolute_path_gets_no_folder_hint(tmp_path, capsys):
    missing = tmp_path / "run.npz"
    assert main(["evaluate", str(missing)]) == 2
    assert capsys.readouterr().err.strip() == f"npformer evaluate: error: checkpoint {missing}: no such file"
