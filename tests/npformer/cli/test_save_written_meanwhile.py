"""`train --save X` checks X before training; a file another program writes at X while the run
trains (a second run of the same command, saving there first) is never replaced without
`--overwrite`: the run's checkpoint is saved beside it as X-1 (the next free name), and one line
says both, exit status 2. With `--overwrite` the run replaces it, as asked."""
from __future__ import annotations

import pytest

import npformer as nf
from npformer.cli import train as cli_train
from tests.npformer.conftest import run_cli, tiny_train_args

OTHER = b"the other run's checkpoint"


@pytest.fixture
def written_during_training(monkeypatch):
    """Write the given paths (another program) once training has finished, before the save."""
    paths = []
    shown = cli_train.print_examples

    def print_examples(*args, **kwargs):
        for p in paths:
            p.write_bytes(OTHER)
        return shown(*args, **kwargs)
    monkeypatch.setattr(cli_train, "print_examples", print_examples)
    return paths


def test_a_file_written_while_the_run_trained_is_kept_and_the_run_saved_beside_it(
        tmp_path, capsys, written_during_training):
    save = tmp_path / "run.npz"
    written_during_training.append(save)
    code, out, err = run_cli(["train", *tiny_train_args(), "--save", str(save)], capsys)
    assert code == 2
    assert save.read_bytes() == OTHER
    beside = tmp_path / "run-1.npz"
    assert nf.load_training_state(beside).step == 1
    assert err == (f"npformer train: error: --save {save}: was written by another program while this "
                   f"run trained (another run saving there?) and is left as it is; this run's "
                   f"checkpoint (step 1) is saved as {beside} (with --overwrite a run replaces the "
                   f"file)\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run-1.npz", "run.npz"]


def test_the_next_free_name_is_taken(tmp_path, capsys, written_during_training):
    save = tmp_path / "run.npz"
    (tmp_path / "run-1.npz").write_bytes(b"kept too")
    written_during_training.append(save)
    code, _, err = run_cli(["train", *tiny_train_args(), "--save", str(save)], capsys)
    assert code == 2 and "is saved as " + str(tmp_path / "run-2.npz") in err
    assert (tmp_path / "run-1.npz").read_bytes() == b"kept too" and save.read_bytes() == OTHER


def test_with_overwrite_the_run_replaces_it(tmp_path, capsys, written_during_training):
    save = tmp_path / "run.npz"
    written_during_training.append(save)
    code, out, _ = run_cli(["train", *tiny_train_args(), "--save", str(save), "--overwrite"], capsys)
    assert code == 0 and f"saved checkpoint {save} (step 1)" in out
    assert nf.load_training_state(save).step == 1
