"""`train --save PATH --overwrite` replaces an earlier checkpoint, never another kind of file: a
text, a notebook or any file that is not an .npz archive at PATH is refused in one line before any
work, and kept as it was."""
import pytest

from tests.npformer.conftest import run_cli as run
from tests.npformer.conftest import tiny_train_args

TINY = tiny_train_args(steps=1)


@pytest.mark.parametrize("name, content", [("notes.txt", b"my notes\n"),
                                           ("analysis.ipynb", b'{"cells": []}'),
                                           ("run.npz", b"not a zip at all")])
def test_overwrite_refuses_a_file_that_is_not_a_checkpoint(tmp_path, capsys, name, content):
    path = tmp_path / name
    path.write_bytes(content)
    code, out, err = run(["train", *TINY, "--save", str(path), "--overwrite"], capsys)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and f"--save {path}" in lines[0] and "not a checkpoint" in lines[0], err
    assert out == ""                                   # refused before the run printed anything
    assert path.read_bytes() == content


def test_overwrite_replaces_an_earlier_checkpoint_and_an_empty_file(tmp_path, capsys):
    ckpt = tmp_path / "run.npz"
    code, _, err = run(["train", *TINY, "--save", str(ckpt)], capsys)
    assert code == 0, err
    first = ckpt.read_bytes()
    code, _, err = run(["train", *TINY, "--save", str(ckpt), "--overwrite", "--seed", "1"], capsys)
    assert code == 0, err
    assert ckpt.read_bytes()[:4] == b"PK\x03\x04" and ckpt.read_bytes() != first
    empty = tmp_path / "new.npz"
    empty.write_bytes(b"")
    code, _, err = run(["train", *TINY, "--save", str(empty), "--overwrite"], capsys)
    assert code == 0, err
    assert empty.read_bytes()[:4] == b"PK\x03\x04"


def test_a_resumed_run_refuses_a_file_that_is_not_a_checkpoint(tmp_path, capsys):
    ckpt, notes = tmp_path / "run.npz", tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    code, _, err = run(["train", *TINY, "--save", str(ckpt)], capsys)
    assert code == 0, err
    code, _, err = run(["train", "--resume", str(ckpt), "--steps", "1", "--no-progress", "--save",
                        str(notes), "--overwrite"], capsys)
    assert code == 2 and "not a checkpoint" in err, err
    assert notes.read_text() == "my notes\n"
