"""A plot set that fails part way (a full disk at the second picture) is one line naming the option
and leaves the plot folder as it was: the pictures the run had added are removed, so the next run
into that folder is not refused for them; a picture that was there before stays."""
import errno

import pytest

import npformer.io.files as npfiles
from tests.npformer.conftest import run_cli as run
from tests.npformer.conftest import tiny_train_args

pytest.importorskip("matplotlib")

TINY = tiny_train_args(steps=2)


def disk_full_at_second_write(monkeypatch):
    real = npfiles.atomic_write
    calls = []

    def atomic_write(path, *a, **k):
        calls.append(path)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real(path, *a, **k)
    monkeypatch.setattr(npfiles, "atomic_write", atomic_write)
    return calls


def assert_one_line(code, err, *needles):
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for n in needles:
        assert n in lines[0], (n, err)


def test_train_plot_on_a_full_disk_removes_the_plots_it_added(tmp_path, capsys, monkeypatch):
    plots = tmp_path / "plots"
    plots.mkdir()
    (plots / "notes.txt").write_text("mine")
    calls = disk_full_at_second_write(monkeypatch)
    code, _, err = run(["train", *TINY, "--plot", str(plots)], capsys)
    assert len(calls) == 2
    assert_one_line(code, err, "--plot", "No space left on device")
    assert sorted(p.name for p in plots.iterdir()) == ["notes.txt"]
    monkeypatch.undo()
    code, _, err = run(["train", *TINY, "--plot", str(plots)], capsys)   # not refused
    assert code == 0, err


def test_plot_command_on_a_full_disk_keeps_only_what_was_there(tmp_path, capsys, monkeypatch):
    ckpt = tmp_path / "m.npz"
    code, _, err = run(["train", *TINY, "--save", str(ckpt)], capsys)
    assert code == 0, err
    out = tmp_path / "pics"
    out.mkdir()
    (out / "loss.png").write_bytes(b"an earlier run's")
    disk_full_at_second_write(monkeypatch)
    code, _, err = run(["plot", str(ckpt), "--out", str(out), "--overwrite"], capsys)
    assert_one_line(code, err, "--out", "No space left on device")
    assert sorted(p.name for p in out.iterdir()) == ["loss.png"]
    assert (out / "loss.png").read_bytes() == b"an earlier run's"
