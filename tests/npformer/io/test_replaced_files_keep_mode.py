"""A file replaced by a save keeps its permission bits: a checkpoint kept private with chmod 600
(or 640 for a group) became 0644 (world-readable) when a later save replaced it, because the new
file is a fresh one renamed over it. A file that did not exist gets the umask's mode."""
import os
import stat

import pytest

import npformer as nf
from npformer.io import hub
from npformer.io.files import atomic_write


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize("bits", [0o600, 0o640, 0o444])
def test_a_replaced_checkpoint_keeps_its_mode(tmp_path, umask_022, bits):
    path = tmp_path / "run.npz"
    nf.save_checkpoint(path, nf.Linear(3, 2))
    assert mode(path) == 0o644                                   # new: the umask's
    os.chmod(path, bits)
    nf.save_checkpoint(path, nf.Linear(3, 2))
    assert mode(path) == bits


def test_atomic_write_keeps_the_mode_of_what_it_replaces(tmp_path, umask_022):
    path = tmp_path / "notes.bin"
    path.write_bytes(b"old")
    os.chmod(path, 0o600)
    atomic_write(path, lambda f: f.write(b"new"))
    assert path.read_bytes() == b"new" and mode(path) == 0o600


def test_save_pretrained_keeps_the_modes_of_the_files_it_replaces(tmp_path, umask_022):
    model = nf.CausalLM(nf.gpt2_config(vocab_size=11, max_len=8, d_model=8, num_heads=2, d_ff=16,
                                       num_decoder_layers=1))
    out = hub.save_pretrained(model, tmp_path / "gpt2")
    for p in out.iterdir():
        os.chmod(p, 0o600)
    hub.save_pretrained(model, out, overwrite=True)
    assert {p.name: mode(p) for p in out.iterdir()} == {"config.json": 0o600,
                                                        "model.safetensors": 0o600}
