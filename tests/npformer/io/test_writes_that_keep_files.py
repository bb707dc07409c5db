"""`overwrite=False` writes (both twins' save_checkpoint and save_training_state, atomic_write's
`replace=False`) never replace a file: one there before, or one another program writes while the new
file is being written, is kept byte for byte, FileExistsError names the path, and no temp file is
left. Where the file system has no hard links, the same holds by a check before the rename. The
default still replaces, as torch.save does."""
from __future__ import annotations

import errno
import os

import pytest

import npformer as nf
import npformer.io.files as nio

CFG = nf.TransformerConfig(d_model=8, num_heads=2, d_ff=16, num_encoder_layers=1, num_decoder_layers=1,
                           vocab_size=11, pad_id=0, max_len=8)
EARLIER = b"another program's file"


def twin(name: str):
    return nf if name == "npformer" else pytest.importorskip("torchformer")


def leftovers(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".tmp." in p.name)


@pytest.mark.parametrize("name", ["npformer", "torchformer"])
def test_save_checkpoint_without_overwrite_keeps_an_existing_file(tmp_path, name):
    m = twin(name)
    path = tmp_path / "model.npz"
    path.write_bytes(EARLIER)
    with pytest.raises(FileExistsError) as e:
        m.save_checkpoint(path, m.Transformer(CFG, seed=0), overwrite=False)
    assert e.value.filename == str(path)
    assert path.read_bytes() == EARLIER and leftovers(tmp_path) == []


@pytest.mark.parametrize("name", ["npformer", "torchformer"])
def test_save_checkpoint_without_overwrite_writes_a_new_file(tmp_path, name):
    m = twin(name)
    path = tmp_path / "model.npz"
    m.save_checkpoint(path, m.Transformer(CFG, seed=0), overwrite=False)
    assert type(nf.load_model(path)).__name__ == "Transformer" and leftovers(tmp_path) == []


def test_the_default_still_replaces(tmp_path):
    path = tmp_path / "model.npz"
    path.write_bytes(EARLIER)
    nf.save_checkpoint(path, nf.Transformer(CFG, seed=0))
    assert path.read_bytes() != EARLIER and nf.load_model(path) is not None


def written_meanwhile(path):
    """A write that, half-way, finds another program creating `path`."""
    def write(f):
        f.write(b"new ")
        path.write_bytes(EARLIER)
        f.write(b"content")
    return write


@pytest.mark.parametrize("links", ["hard links", "no hard links"])
def test_a_file_written_meanwhile_is_kept(tmp_path, monkeypatch, links):
    if links == "no hard links":
        def no_link(src, dst):
            raise PermissionError(errno.EPERM, os.strerror(errno.EPERM), str(src))
        monkeypatch.setattr(nio.os, "link", no_link)
    path = tmp_path / "out.bin"
    with pytest.raises(FileExistsError) as e:
        nio.atomic_write(path, written_meanwhile(path), replace=False)
    assert e.value.filename == str(path)
    assert path.read_bytes() == EARLIER and leftovers(tmp_path) == []
    fresh = tmp_path / "fresh.bin"
    nio.atomic_write(fresh, lambda f: f.write(b"content"), replace=False)
    assert fresh.read_bytes() == b"content" and leftovers(tmp_path) == []


@pytest.mark.parametrize("name", ["npformer", "torchformer"])
def test_save_training_state_without_overwrite_keeps_an_existing_file(tmp_path, name):
    from npformer.cli.main import main
    from tests.npformer.conftest import tiny_train_args
    m = twin(name)
    run = tmp_path / "run.npz"
    backend = "numpy" if name == "npformer" else "torch"
    assert main(["train", *tiny_train_args(), "--backend", backend, "--save", str(run)]) == 0
    state = m.load_training_state(run)
    path = tmp_path / "again.npz"
    path.write_bytes(EARLIER)
    with pytest.raises(FileExistsError):
        m.save_training_state(path, state, overwrite=False)
    assert path.read_bytes() == EARLIER and leftovers(tmp_path) == []
    m.save_training_state(tmp_path / "new.npz", state, overwrite=False)
    assert m.load_training_state(tmp_path / "new.npz").step == state.step
