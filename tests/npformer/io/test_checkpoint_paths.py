"""Checkpoint paths given to the Python API: anything that is not a file path, a folder, or a folder
that is missing or is a file is refused with one message naming the checkpoint path, before anything is
written, and no temporary file is left behind (pathlib's and os.replace's own errors never reach the
caller)."""
import os
import stat

import numpy as np
import pytest

import npformer as nf
from npformer.io.checkpoint_file import CheckpointError
from npformer.io.safetensors import write_safetensors

CFG = nf.TransformerConfig(d_model=8, num_heads=2, d_ff=8, num_encoder_layers=1,
                           num_decoder_layers=1, vocab_size=9, max_len=8)


@pytest.fixture
def model():
    return nf.Transformer(CFG, seed=0)


@pytest.mark.parametrize("bad", [3, None, b"m.npz", "", ["m.npz"]])
def test_save_refuses_what_is_not_a_path(model, bad):
    with pytest.raises(TypeError, match=r"^checkpoint path: expected a file path \(str or "
                                        r"os\.PathLike\), got "):
        nf.save_checkpoint(bad, model)


@pytest.mark.parametrize("load", ["load_checkpoint", "load_model", "load_training_state"])
@pytest.mark.parametrize("bad", [3, None, b"m.npz"])
def test_loads_refuse_what_is_not_a_path(load, bad):
    with pytest.raises(TypeError, match=r"^checkpoint path: expected a file path"):
        getattr(nf, load)(bad)


def test_save_into_a_folder_path_writes_nothing(model, tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    with pytest.raises(CheckpointError, match=r"runs: is a folder; expected a file path$"):
        nf.save_checkpoint(folder, model)
    assert list(tmp_path.iterdir()) == [folder] and list(folder.iterdir()) == []


def test_save_under_a_missing_folder_says_so(model, tmp_path):
    with pytest.raises(CheckpointError, match=r"folder .*nope[/\\]deeper does not exist \(create it "
                                              r"first\)$"):
        nf.save_checkpoint(tmp_path / "nope" / "deeper" / "m.npz", model)
    assert list(tmp_path.iterdir()) == []


def test_save_under_a_file_says_so(model, tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("keep me")
    with pytest.raises(CheckpointError, match=r"notes\.txt is a file$"):
        nf.save_checkpoint(f / "m.npz", model)
    assert f.read_text() == "keep me" and list(tmp_path.iterdir()) == [f]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this system")
def test_save_onto_a_named_pipe_is_refused_and_keeps_it(model, tmp_path):
    """The command line refused a pipe as --save; the API renamed its checkpoint over it."""
    fifo = tmp_path / "m.npz"
    os.mkfifo(fifo)
    with pytest.raises(CheckpointError, match=r"m\.npz: exists and is not a regular file"):
        nf.save_checkpoint(fifo, model)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and list(tmp_path.iterdir()) == [fifo]
    with pytest.raises(OSError, match="not a regular file"):
        write_safetensors(fifo, model.state_dict())
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_good_path_still_saves_and_loads(model, tmp_path):
    path = nf.save_checkpoint(str(tmp_path / "m.npz"), model)
    loaded = nf.load_model(path)
    assert all(np.array_equal(v, loaded.state_dict()[k]) for k, v in model.state_dict().items())
