"""Output checks create an output's missing folders before the work starts (so a path that cannot
be written is refused at once); a command that then fails or is interrupted without writing
anything there removes the folders it created, when still empty. A refused `train --save
new/a/x.npz` (a missing --data, sizes beyond memory) or `generate --out new/out.txt` left the empty
folders `new/a` behind. Folders that existed before, or that hold anything, are never removed."""
import pytest

from npformer.cli import train as cli_train
from tests.npformer.conftest import run_cli as run
from tests.npformer.conftest import tiny_train_args


def test_a_refused_train_removes_the_folders_its_checks_made(tmp_path, capsys):
    code, _, err = run(["train", *tiny_train_args(max_len=None, num_symbols=None), "--task", "lm",
                        "--data", str(tmp_path / "missing.txt"), "--save",
                        str(tmp_path / "new" / "a" / "x.npz")], capsys)
    assert code == 2 and "no such file" in err
    assert list(tmp_path.iterdir()) == []


def test_a_run_beyond_memory_removes_the_save_and_plot_folders(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    code, _, err = run(["train", *tiny_train_args(batch_size=10**11), "--save",
                        str(tmp_path / "new" / "a" / "x.npz"), "--plot",
                        str(tmp_path / "new" / "p" / "q")], capsys)
    assert code == 2 and "available" in err
    assert list(tmp_path.iterdir()) == []


def test_an_interrupted_run_removes_them_too(tmp_path, capsys, monkeypatch):
    def ctrl_c(*a, **k):
        raise KeyboardInterrupt
    monkeypatch.setattr(cli_train, "print_examples", ctrl_c)
    code, _, _ = run(["train", *tiny_train_args(), "--save", str(tmp_path / "new" / "x.npz")], capsys)
    assert code == 130
    assert list(tmp_path.iterdir()) == []


def test_a_refused_generate_removes_the_out_folders(tmp_path, capsys):
    ckpt = tmp_path / "m.npz"
    assert run(["train", *tiny_train_args(), "--save", str(ckpt)], capsys)[0] == 0
    code, _, err = run(["generate", str(ckpt), "abc", "--out", str(tmp_path / "new" / "out.txt")],
                       capsys)
    assert code == 2 and "--out" in err
    assert [p.name for p in tmp_path.iterdir()] == ["m.npz"]


def test_folders_that_existed_or_hold_files_are_kept(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    (tmp_path / "made").mkdir()
    code, _, _ = run(["train", *tiny_train_args(batch_size=10**11), "--save",
                      str(tmp_path / "empty" / "x.npz")], capsys)
    assert code == 2 and (tmp_path / "empty").is_dir()
    code, _, err = run(["train", *tiny_train_args(), "--save", str(tmp_path / "new" / "a" / "x.npz")],
                       capsys)
    assert code == 0 and (tmp_path / "new" / "a" / "x.npz").is_file(), err


def test_a_block_that_ends_well_keeps_its_folders_and_forgets_them(tmp_path):
    """The folders a successful block's checks made stay on disk and leave the record, so a long
    process (a notebook, a test run) does not collect every folder it ever made."""
    from npformer.io import files
    before = len(files._MADE)
    with files.made_folders_removed_on_failure():
        files.check_output_dir(tmp_path / "a" / "b", "--out")
    assert (tmp_path / "a" / "b").is_dir()
    assert len(files._MADE) == before
