"""Output paths checked before any work, no silent overwrite, write failures that keep the old file,
fsync before rename, and stale temp files of dead processes removed (npformer.io.files and the CLI)."""
import errno
import os
import subprocess
import sys

import numpy as np
import pytest

import npformer.io.files as nio
import npformer.training.train as train_mod
from npformer.io import checkpoint as ck
from tests.npformer.conftest import run_cli as run
from tests.npformer.conftest import tiny_train_args

TINY = tiny_train_args(steps=2)




@pytest.fixture
def no_training(monkeypatch):
    """Make any training attempt fail loudly: the path checks must come first."""
    def boom(*a, **k):
        raise AssertionError("training started before the output path was checked")
    monkeypatch.setattr(train_mod, "train", boom)


def one_line_error(code, err, *needles):
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for n in needles:
        assert n in lines[0], (n, err)


# -- refused before training ---------------------------------------------------------------------------
def test_save_parent_is_a_file(tmp_path, capsys, no_training):
    (tmp_path / "f").write_text("x")
    code, _, err = run(["train", *TINY, "--save", str(tmp_path / "f" / "m.npz")], capsys)
    one_line_error(code, err, "--save", "is a file")


def test_save_is_a_directory(tmp_path, capsys, no_training):
    code, _, err = run(["train", *TINY, "--save", str(tmp_path)], capsys)
    one_line_error(code, err, "--save", "is a folder")


def test_save_existing_file_needs_overwrite(tmp_path, capsys, no_training):
    f = tmp_path / "m.npz"
    f.write_bytes(b"precious")
    code, _, err = run(["train", *TINY, "--save", str(f)], capsys)
    one_line_error(code, err, "--save", "exists", "--overwrite")
    assert f.read_bytes() == b"precious"


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores permission bits")
def test_save_read_only_folder_by_permissions(tmp_path, capsys, no_training):
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o555)
    try:
        code, _, err = run(["train", *TINY, "--save", str(d / "m.npz")], capsys)
    finally:
        d.chmod(0o755)
    one_line_error(code, err, "--save", "not writable")


def test_save_folder_where_files_cannot_be_created(tmp_path, capsys, no_training, monkeypatch):
    # a read-only mount refuses even root: simulated by the probe file's creation failing
    real_open = os.open

    def ro_open(path, flags, *a, **k):
        if ".npformer-probe." in str(path):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real_open(path, flags, *a, **k)
    monkeypatch.setattr(os, "open", ro_open)
    code, _, err = run(["train", *TINY, "--save", str(tmp_path / "m.npz")], capsys)
    one_line_error(code, err, "--save", "Read-only file system")


def test_missing_parent_folders_are_created(tmp_path):
    p = nio.check_output_file(tmp_path / "a" / "b" / "m.npz", "--save")
    assert (tmp_path / "a" / "b").is_dir() and not p.exists()


def test_plot_dir_that_is_a_file(tmp_path, capsys, no_training):
    (tmp_path / "f").write_text("x")
    code, _, err = run(["train", *TINY, "--plot", str(tmp_path / "f")], capsys)
    one_line_error(code, err, "--plot", "is a file")
    code, _, err = run(["train", *TINY, "--plot", str(tmp_path / "f" / "sub")], capsys)
    one_line_error(code, err, "--plot", "is a file")


def test_plot_command_out_checked_before_loading(tmp_path, capsys):
    (tmp_path / "f").write_text("x")
    # the checkpoint does not even exist: the --out error must come first
    code, _, err = run(["plot", str(tmp_path / "nope.npz"), "--out", str(tmp_path / "f")], capsys)
    one_line_error(code, err, "--out", "is a file")


# -- write-time failures -----------------------------------------------------------------------------
def test_disk_full_keeps_the_earlier_checkpoint(tmp_path, capsys, monkeypatch):
    f = tmp_path / "m.npz"
    assert run(["train", *TINY, "--save", str(f)], capsys)[0] == 0
    before = f.read_bytes()

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(np, "savez", full)
    code, _, err = run(["train", *TINY, "--save", str(f), "--overwrite"], capsys)
    one_line_error(code, err, "--save", "No space left on device", "unchanged")
    assert f.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["m.npz"]               # no temp file left


def test_atomic_write_error_names_option(tmp_path):
    f = tmp_path / "x.bin"
    f.write_bytes(b"old")

    def write(fh):
        fh.write(b"partial")
        raise OSError(errno.ENOSPC, "No space left on device")
    with pytest.raises(nio.OutputPathError, match=r"--out .*disk is full.*unchanged"):
        nio.atomic_write(f, write, option="--out")
    assert f.read_bytes() == b"old" and os.listdir(tmp_path) == ["x.bin"]


def test_atomic_write_fsyncs_file_and_folder_before_returning(tmp_path, monkeypatch):
    synced = []
    real = os.fsync

    def spy(fd):
        synced.append(os.path.isdir(f"/proc/self/fd/{fd}") if os.path.exists("/proc/self/fd")
                      else None)
        return real(fd)
    monkeypatch.setattr(os, "fsync", spy)
    nio.atomic_write(tmp_path / "a.bin", lambda fh: fh.write(b"data"))
    assert synced[:1] == [False] and True in synced, synced        # the file, then the folder


# -- stale temp files ----------------------------------------------------------------------------------
def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_stale_temp_of_dead_process_removed_on_next_save(tmp_path):
    target = tmp_path / "m.npz"
    stale = nio.temp_name(target, _dead_pid())
    stale.write_bytes(b"x" * 1000)                               # left by a kill -9 mid-save
    live = nio.temp_name(target, os.getppid())                    # a live process: left alone
    live.write_bytes(b"y")
    from tests.npformer.io.test_checkpoint import TinyNet
    ck.save_checkpoint(target, TinyNet())
    assert not stale.exists() and live.exists() and target.exists()


def test_kill_9_during_save_then_next_save_cleans_up(tmp_path):
    target = tmp_path / "m.npz"
    code = ("import os, signal, numpy as np\n"
            "from npformer.io.files import atomic_write\n"
            "def w(f):\n"
            "    f.write(b'x' * 100000); f.flush(); os.kill(os.getpid(), signal.SIGKILL)\n"
            f"atomic_write({str(target)!r}, w)\n")
    r = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert r.returncode == -9
    left = [p for p in os.listdir(tmp_path) if p.startswith(".m.npz.tmp.")]
    assert len(left) == 1 and not target.exists()
    nio.atomic_write(target, lambda f: f.write(b"ok"))
    assert os.listdir(tmp_path) == ["m.npz"]


def test_output_dir_refuses_files_it_would_replace_unless_overwrite(tmp_path):
    from npformer.io.files import OutputPathError, check_output_dir
    (tmp_path / "results.json").write_text("kept")
    with pytest.raises(OutputPathError, match=r"--out .*: holds results.json; pass --overwrite"):
        check_output_dir(tmp_path, "--out", writes=["results.json", "plot.png"])
    assert (tmp_path / "results.json").read_text() == "kept"
    assert check_output_dir(tmp_path, "--out", writes=["results.json"], overwrite=True) == tmp_path
    assert check_output_dir(tmp_path, "--out", writes=["plot.png"]) == tmp_path   # nothing taken
