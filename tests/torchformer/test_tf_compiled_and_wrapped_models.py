"""Models wrapped by torch.compile (parameter names `_orig_mod.*`) or DataParallel (`module.*`):
checkpoints of them are the plain model's (they load in both twins), checkpoints load into them, the
bridge copies them, and a state_dict with a wrapper's prefix is refused with a message saying what
the prefix is and how to load it.

Building the wrapper compiles nothing (compilation happens at the first call), so these tests are
fast.
"""
import re

import numpy as np
import pytest
import torch

import npformer as nf
import torchformer as tf
from npformer.checks.dropout_masks import collect_dropout_masks as np_collect
from npformer.io.checkpoint import load_checkpoint
from torchformer.checks.dropout_masks import (
    collect_dropout_masks,
    replay_dropout_masks,
    set_record_masks,
)
from torchformer.models.bridge import copy_weights, unwrap

CFG = nf.TransformerConfig(d_model=8, num_heads=2, d_ff=16, num_encoder_layers=1,
                           num_decoder_layers=1, vocab_size=11, pad_id=0, max_len=8)
# torch.compile imports torch._dynamo, which trips torch's own deprecation of torch.jit.script_method
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated:DeprecationWarning")

WRAPPERS = {"compiled": torch.compile, "DataParallel": torch.nn.DataParallel}


def as_array(v) -> np.ndarray:
    return v.detach().numpy().copy() if isinstance(v, torch.Tensor) else np.array(v, copy=True)


def plain_state(model):
    return {k: as_array(v) for k, v in model.state_dict().items()}


@pytest.mark.parametrize("wrap", WRAPPERS.values(), ids=WRAPPERS.keys())
def test_a_wrapped_model_saves_the_plain_models_checkpoint(tmp_path, wrap):
    model = tf.Transformer(CFG, seed=3)
    path = tf.save_checkpoint(tmp_path / "w.npz", wrap(model))
    ckpt = load_checkpoint(path)
    assert ckpt.model_class == "Transformer"
    assert set(ckpt.state) == set(model.state_dict())
    for twin in (nf, tf):                      # loads as a plain model in both twins
        loaded = twin.load_model(path)
        got = loaded.state_dict()
        for k, v in plain_state(model).items():
            np.testing.assert_array_equal(as_array(got[k]), v)


@pytest.mark.parametrize("wrap", WRAPPERS.values(), ids=WRAPPERS.keys())
def test_a_checkpoint_restores_into_a_wrapped_model(tmp_path, wrap):
    source = tf.Transformer(CFG, seed=1)
    path = tf.save_checkpoint(tmp_path / "p.npz", source)
    target = tf.Transformer(CFG, seed=2)
    wrapped = wrap(target)
    opt = torch.optim.Adam(wrapped.parameters(), lr=1e-3)
    tf.restore(path, wrapped)
    for k, v in plain_state(source).items():
        np.testing.assert_array_equal(target.state_dict()[k].numpy(), v)
    tf.save_checkpoint(tmp_path / "o.npz", wrapped, opt)          # the optimizer's params are found


@pytest.mark.parametrize("wrap", WRAPPERS.values(), ids=WRAPPERS.keys())
def test_the_bridge_copies_wrapped_models(wrap):
    model = tf.Transformer(CFG, seed=4)
    twin = tf.to_numpy(wrap(model))
    assert type(twin).__name__ == "Transformer"
    for k, v in plain_state(model).items():
        np.testing.assert_array_equal(twin.state_dict()[k], v)
    other = tf.Transformer(CFG, seed=5)
    copy_weights(nf.Transformer(CFG, seed=4), wrap(other))
    for k, v in plain_state(model).items():
        np.testing.assert_array_equal(other.state_dict()[k].numpy(), v)
    assert unwrap(torch.nn.DataParallel(torch.compile(model))) is model


@pytest.mark.parametrize("prefix, what", [("_orig_mod.", "a torch.compile'd model"),
                                          ("module.", "a DistributedDataParallel or DataParallel")])
@pytest.mark.parametrize("twin", [nf, tf], ids=["npformer", "torchformer"])
def test_a_state_dict_with_a_wrappers_prefix_is_explained(twin, prefix, what):
    source = tf.Transformer(CFG, seed=6)
    state = {prefix + k: (v if twin is tf else v.numpy()) for k, v in source.state_dict().items()}
    target = twin.Transformer(CFG, seed=7)
    before = plain_state(target)
    with pytest.raises(ValueError, match=re.escape(f"every key starts with {prefix!r} (the state_dict "
                                                   f"of {what}")) as err:
        target.load_state_dict(state)
    assert f"k.removeprefix({prefix!r})" in str(err.value)
    assert len(str(err.value)) < 600                 # the key lists are not repeated
    for k, v in plain_state(target).items():
        np.testing.assert_array_equal(v, before[k])


def test_a_partly_prefixed_state_dict_still_lists_its_keys():
    """Only a state_dict in which nothing matched gets the wrapper explanation."""
    model = tf.Linear(3, 2)
    state = {"weight": torch.zeros(2, 3), "module.bias": torch.zeros(2)}
    with pytest.raises(ValueError, match=re.escape("missing keys ['bias']; unexpected keys "
                                                   "['module.bias']")):
        model.load_state_dict(state)


@pytest.mark.parametrize("call, message", [
    (lambda: tf.models.bridge.copy_grads_to_numpy(nf.Linear(3, 2), tf.Linear(3, 2)),
     "torch_model: expected a torchformer module, got the npformer module Linear"),
    (lambda: tf.models.bridge.copy_grads_to_numpy(tf.Linear(3, 2), tf.Linear(3, 2)),
     "np_model: expected an npformer module, got the torch module Linear"),
    (lambda: tf.grads_by_name("model.npz"),
     "grads_by_name: model: expected an npformer or torchformer module, got str"),
    (lambda: copy_weights(None, tf.Linear(3, 2)),
     "copy_weights: src: expected an npformer or torchformer module, got NoneType"),
    (lambda: tf.to_numpy(nf.Linear(3, 2)),
     "torch_model: expected a torchformer module, got the npformer module Linear"),
])
def test_bridge_functions_given_the_wrong_twin_name_the_argument(call, message):
    with pytest.raises(TypeError, match=re.escape(message)):
        call()


@pytest.mark.parametrize("wrap", WRAPPERS.values(), ids=WRAPPERS.keys())
def test_attention_maps_and_dropout_masks_of_a_wrapped_model_use_the_plain_names(wrap):
    model = tf.Transformer(CFG.replace(dropout=0.3), seed=8)
    src, tgt = torch.tensor([[3, 4, 2]]), torch.tensor([[1, 3]])
    maps = tf.attention_weights(wrap(model), src, tgt)
    assert set(maps) == set(tf.attention_weights(model, src, tgt))
    assert "decoder.layers.0.cross_attn" in maps
    twin = nf.Transformer(CFG.replace(dropout=0.3), seed=8)
    twin.train()
    twin(src.numpy(), tgt.numpy())
    masks = nf.collect_dropout_masks(twin) if hasattr(nf, "collect_dropout_masks") else None
    masks = np_collect(twin)
    wrapped = wrap(model)
    replay_dropout_masks(wrapped, masks)                 # npformer's names fit the wrapped model
    set_record_masks(wrapped, True)
    model.train()
    model(src, tgt)                                      # the plain model: no compilation here
    got = collect_dropout_masks(wrapped)
    assert set(got) == set(masks)
    for k, v in masks.items():
        np.testing.assert_array_equal(got[k].numpy(), v)


@pytest.mark.parametrize("wrap", WRAPPERS.values(), ids=WRAPPERS.keys())
def test_a_wrapped_model_saves_a_hugging_face_folder(tmp_path, wrap):
    from npformer.models.config import gpt2_config
    from torchformer.io.hub import from_pretrained, save_pretrained, to_hf_state_dict
    model = tf.CausalLM(gpt2_config(d_model=8, num_heads=2, d_ff=16, num_decoder_layers=1,
                                    vocab_size=11, max_len=8), seed=9)
    assert set(to_hf_state_dict(wrap(model))) == set(to_hf_state_dict(model))
    save_pretrained(wrap(model), tmp_path / "gpt")
    loaded = from_pretrained(tmp_path / "gpt")
    for k, v in plain_state(model).items():
        np.testing.assert_array_equal(loaded.state_dict()[k].numpy(), v)
