"""A checkpoint (or model folder) named by a relative path that is not there says which folder it was
looked for in, as a missing `--data` path does: run from another folder than training, `generate
run.npz ...` said only `checkpoint run.npz: no such file`."""
from __future__ import annotations

from npformer.cli.main import main


def test_a_missing_relative_checkpoint_names_the_current_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for argv in (["generate", "run.npz", "abc"], ["evaluate", "run.npz"],
                 ["train", "--resume", "run.npz", "--steps", "1"]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert err.endswith(f"checkpoint run.npz: no such file (a relative path is read from the current "
                            f"folder, {tmp_path})"), err


def test_an_absolute_path_gets_no_folder_hint(tmp_path, capsys):
    missing = tmp_path / "run.npz"
    assert main(["evaluate", str(missing)]) == 2
    assert capsys.readouterr().err.strip() == f"npformer evaluate: error: checkpoint {missing}: no such file"
