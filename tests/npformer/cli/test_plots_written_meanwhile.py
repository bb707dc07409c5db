"""`train --plot DIR` and `plot --out DIR` check DIR before any work; a picture another program writes
there meanwhile (a second run into the same folder) is never replaced without `--overwrite`: the set
fails as a whole in one line naming the option and the picture, and removes only its own pictures.
Both used to replace it at the end, and a set that failed later deleted it as one of "its own"."""
import errno
from pathlib import Path

import pytest

import npformer.io.files as npfiles
from tests.npformer.conftest import run_cli as run
from tests.npformer.conftest import tiny_train_args

pytest.importorskip("matplotlib")

TINY = tiny_train_args(steps=2)
OTHER = b"the other program's picture"


def another_program_writes_before(monkeypatch, nth: int, name: str | None = None):
    """Just before the nth picture is written, another program writes `name` in its folder (the
    nth picture's own name when None)."""
    real = npfiles.atomic_write
    calls = []

    def atomic_write(path, *a, **k):
        path = Path(path)
        calls.append(path)
        if len(calls) == nth:
            (path.parent / (name or path.name)).write_bytes(OTHER)
        return real(path, *a, **k)
    monkeypatch.setattr(npfiles, "atomic_write", atomic_write)
    return calls


def one_line(code, err) -> str:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("nth", [1, 2])
def test_train_plot_keeps_a_picture_written_meanwhile(tmp_path, capsys, monkeypatch, nth):
    plots = tmp_path / "plots"
    calls = another_program_writes_before(monkeypatch, nth)
    code, _, err = run(["train", *TINY, "--plot", str(plots)], capsys)
    taken = calls[nth - 1].name
    assert one_line(code, err) == (
        f"npformer train: error: --plot {plots}: {taken} was written by another program while this "
        f"one worked, and is left as it is; the plots this run had added were removed "
        f"(--overwrite replaces them)")
    assert [p.name for p in plots.iterdir()] == [taken]
    assert (plots / taken).read_bytes() == OTHER


def test_plot_command_keeps_a_picture_written_meanwhile(tmp_path, capsys, monkeypatch):
    ckpt = tmp_path / "m.npz"
    assert run(["train", *TINY, "--save", str(ckpt)], capsys)[0] == 0
    out = tmp_path / "pics"
    calls = another_program_writes_before(monkeypatch, 2)
    code, _, err = run(["plot", str(ckpt), "--out", str(out)], capsys)
    line = one_line(code, err)
    assert f"--out {out}: {calls[1].name} was written by another program" in line
    assert [p.name for p in out.iterdir()] == [calls[1].name]


def test_a_failed_set_never_removes_a_picture_another_program_wrote(tmp_path, capsys, monkeypatch):
    """Another program writes a picture under a name this run does not draw; then the disk fills."""
    plots = tmp_path / "plots"
    real = npfiles.atomic_write
    calls = []

    def atomic_write(path, *a, **k):
        path = Path(path)
        calls.append(path)
        if len(calls) == 2:
            (path.parent / "attn_cross_layer7.png").write_bytes(OTHER)
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real(path, *a, **k)
    monkeypatch.setattr(npfiles, "atomic_write", atomic_write)
    code, _, err = run(["train", *TINY, "--plot", str(plots)], capsys)
    assert "No space left on device" in one_line(code, err)
    assert [p.name for p in plots.iterdir()] == ["attn_cross_layer7.png"]


def test_with_overwrite_the_run_replaces_it(tmp_path, capsys, monkeypatch):
    plots = tmp_path / "plots"
    calls = another_program_writes_before(monkeypatch, 1)
    code, out, err = run(["train", *TINY, "--plot", str(plots), "--overwrite"], capsys)
    assert code == 0, err
    assert (plots / calls[0].name).read_bytes().startswith(b"\x89PNG")
