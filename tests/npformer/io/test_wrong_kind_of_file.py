"""A file of the other kind handed to a loader: load_model given a Hugging Face folder or a
.safetensors file, from_pretrained given an .npz checkpoint, say which loader reads it."""
import re

import pytest

import npformer as nf
from npformer.io.checkpoint import CheckpointError
from npformer.io.hub import from_pretrained, save_pretrained
from npformer.models.config import gpt2_config


@pytest.fixture
def files(tmp_path):
    model = nf.CausalLM(gpt2_config(d_model=8, num_heads=2, d_ff=16, num_decoder_layers=1,
                                    vocab_size=11, max_len=8), seed=0)
    folder = save_pretrained(model, tmp_path / "gpt")
    ckpt = nf.save_checkpoint(tmp_path / "lm.npz", model)
    return folder, ckpt


def test_load_model_of_a_hugging_face_folder_points_to_from_pretrained(files):
    folder, _ = files
    with pytest.raises(CheckpointError, match=re.escape(f"checkpoint {folder}: is a folder, not a "
                                                        f"checkpoint file; it is a Hugging Face model "
                                                        f"folder (config.json): load it with "
                                                        f"from_pretrained")):
        nf.load_model(folder)


def test_load_model_of_a_safetensors_file_points_to_from_pretrained(files):
    folder, _ = files
    with pytest.raises(CheckpointError, match=re.escape("a .safetensors file holds weights only: load "
                                                        "its Hugging Face folder with from_pretrained")):
        nf.load_model(folder / "model.safetensors")


def test_from_pretrained_of_a_checkpoint_points_to_load_model(files):
    _, ckpt = files
    with pytest.raises(NotADirectoryError, match=re.escape(f"folder: expected a Hugging Face model "
                                                           f"folder, got the file {ckpt}; an npformer "
                                                           f"checkpoint (.npz) loads with load_model")):
        from_pretrained(ckpt)


def test_other_folders_and_files_keep_their_messages(tmp_path):
    with pytest.raises(CheckpointError, match=r": is a folder, not a checkpoint file \(\.npz\)$"):
        nf.load_model(tmp_path)
    with pytest.raises(FileNotFoundError, match="a Hugging Face model folder"):
        from_pretrained(tmp_path)


@pytest.mark.parametrize("twin", ["npformer", "torchformer"])
def test_a_torch_save_file_says_what_it_is_and_what_to_do(tmp_path, twin):
    torch = pytest.importorskip("torch")
    import torchformer as tf
    model = tf.CausalLM(gpt2_config(d_model=8, num_heads=2, d_ff=16, num_decoder_layers=1,
                                    vocab_size=11, max_len=8), seed=0)
    path = tmp_path / "model.pt"
    torch.save(model.state_dict(), path)
    load = nf.load_model if twin == "npformer" else tf.load_model
    with pytest.raises(CheckpointError) as e:
        load(path)
    message = str(e.value)
    assert "torch.save" in message and "not unpickled" in message
    assert "save_checkpoint" in message and "load_state_dict" in message
