"""`overwrite` of every writer in both twins (save_checkpoint, save_training_state, write_safetensors,
save_pretrained) is a bool: `overwrite="no"` (truthy) replaced the file it was meant to keep. A
non-bool is a TypeError naming `overwrite`, and the file there is left byte for byte; NumPy's bool
is taken."""
import importlib

import numpy as np
import pytest

import npformer as nf
from npformer.io.safetensors import write_safetensors

try:
    import torchformer as tf
except ImportError:                                     # numpy only: npformer's own
    tf = None

TWINS = [nf] + ([tf] if tf is not None else [])
BAD = ["no", "False", 0, 1, None, np.int64(0)]


def _config():
    return nf.TransformerConfig(d_model=8, num_heads=2, d_ff=16, num_decoder_layers=1, vocab_size=10,
                                max_len=8)


def _writers(twin):
    """(name, write(path, overwrite)) for each writer of a file in `twin`."""
    lm = twin.CausalLM(_config(), seed=0)
    out = [("save_checkpoint", lambda p, ow: twin.save_checkpoint(p, lm, overwrite=ow))]
    if twin is nf:
        out.append(("write_safetensors", lambda p, ow: write_safetensors(
            p, {"w": np.zeros(2, np.float32)}, overwrite=ow)))
    return out


@pytest.mark.parametrize("twin", TWINS, ids=lambda t: t.__name__)
@pytest.mark.parametrize("bad", BAD, ids=repr)
def test_a_non_bool_overwrite_is_refused_and_keeps_the_file(tmp_path, twin, bad):
    for name, write in _writers(twin):
        path = tmp_path / f"{name}.bin"
        path.write_bytes(b"the user's file")
        with pytest.raises(TypeError, match=r"overwrite: expected a bool \(True replaces an existing "
                                            r"file\), got "):
            write(path, bad)
        assert path.read_bytes() == b"the user's file", name
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]   # no temp file


@pytest.mark.parametrize("twin", TWINS, ids=lambda t: t.__name__)
def test_save_pretrained_refuses_a_non_bool_overwrite(tmp_path, twin):
    folder = tmp_path / "gpt2"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    lm = twin.CausalLM(nf.gpt2_config(d_model=8, num_heads=2, d_ff=32, num_decoder_layers=1,
                                      vocab_size=10, max_len=8), seed=0)
    save_pretrained = importlib.import_module(f"{twin.__name__}.io.hub").save_pretrained
    with pytest.raises(TypeError, match="overwrite: expected a bool"):
        save_pretrained(lm, folder, overwrite="no")
    assert [p.name for p in folder.iterdir()] == ["config.json"]
    assert (folder / "config.json").read_text() == "{}"


def test_numpy_bools_are_taken(tmp_path):
    path = tmp_path / "m.npz"
    lm = nf.CausalLM(_config(), seed=0)
    nf.save_checkpoint(path, lm, overwrite=np.bool_(False))
    with pytest.raises(FileExistsError):
        nf.save_checkpoint(path, lm, overwrite=np.bool_(False))
    nf.save_checkpoint(path, lm, overwrite=np.bool_(True))
