"""Devices: a float input on another device than the module, and a device argument torch cannot use,
are named errors (the argument, the device expected, the device that came), never a deep torch
error or, through the checked public attention function, uninitialised memory returned as a result.

No GPU is needed: the "meta" device stands in for another device (a tensor there has a shape and a
dtype but no data), and CUDA arguments are refused on a machine where torch has no CUDA.
"""
import re

import numpy as np
import pytest
import torch

import npformer as nf
import torchformer as tf
from npformer.models.config import TransformerConfig

CFG = TransformerConfig(d_model=8, num_heads=2, d_ff=16, num_encoder_layers=1, num_decoder_layers=1,
                        vocab_size=11, pad_id=0, max_len=8)
ELSEWHERE = "meta"


def on_meta(*shape):
    return torch.empty(*shape, device=ELSEWHERE)


def moved_message(name: str, owner: str = "the module's") -> str:
    return re.escape(f"{name}: expected a tensor on cpu ({owner} device; move it with .to('cpu')), "
                     f"got one on meta")


@pytest.mark.parametrize("build, call, name", [
    (lambda: tf.Linear(8, 3), lambda m: m(on_meta(2, 8)), "x"),
    (lambda: tf.LayerNorm(8), lambda m: m(on_meta(2, 8)), "x"),
    (lambda: tf.PositionwiseFeedForward(8, 16), lambda m: m(on_meta(1, 3, 8)), "x"),
    (lambda: tf.MultiHeadAttention(8, 2),
     lambda m: m(torch.randn(1, 3, 8), on_meta(1, 3, 8), on_meta(1, 3, 8)), "key"),
    (lambda: tf.MultiHeadAttention(8, 2),
     lambda m: m(on_meta(1, 3, 8), on_meta(1, 3, 8), on_meta(1, 3, 8)), "query"),
    (lambda: tf.Encoder(CFG), lambda m: m(on_meta(1, 3, 8)), "x"),
    (lambda: tf.Transformer(CFG),
     lambda m: m.decode(torch.tensor([[1, 4]]), on_meta(1, 3, 8)), "memory"),
], ids=["linear", "layernorm", "feedforward", "attention key", "attention query", "encoder",
        "transformer memory"])
def test_a_float_input_on_another_device_is_named(build, call, name):
    with pytest.raises(ValueError, match=moved_message(name)):
        call(build())


def test_attention_function_refuses_keys_on_another_device_than_the_queries():
    q = torch.randn(1, 2, 3, 4)
    with pytest.raises(ValueError, match=moved_message("k", "q's")):
        tf.scaled_dot_product_attention(q, on_meta(1, 2, 3, 4), torch.randn(1, 2, 3, 4))
    with pytest.raises(ValueError, match=moved_message("v", "q's")):
        tf.scaled_dot_product_attention(q, torch.randn(1, 2, 3, 4), on_meta(1, 2, 3, 4))


def test_attention_function_names_the_query_dtype_not_a_module():
    q = torch.randn(1, 2, 3, 4)
    with pytest.raises(TypeError, match=re.escape("k: expected dtype torch.float32 (q's dtype")):
        tf.scaled_dot_product_attention(q, q.double(), q)
    a = q.numpy()
    with pytest.raises(TypeError, match=re.escape("v: expected dtype float32 (q's dtype")):
        nf.sdpa_forward(a, a, a.astype(np.float64))


def test_ids_and_masks_on_the_host_still_reach_the_model():
    """Ids and masks are small and are moved to the model's device, as before (numpy too)."""
    model = tf.Transformer(CFG, seed=0).eval()
    src = np.array([[3, 4, 2, 0]])
    tgt = torch.tensor([[1, 4]])
    keep = np.array([[True, True, True, False]])
    out = model(src, tgt, src_key_keep=keep)
    ref = model(torch.as_tensor(src), tgt)            # the pad mask built from pad_id is the same
    torch.testing.assert_close(out, ref, rtol=0, atol=0)


@pytest.mark.parametrize("device", ["gpu", "cpu:x", 3.5])
def test_a_device_torch_cannot_read_is_named(device):
    with pytest.raises(ValueError, match=re.escape(f"device: expected a torch device such as 'cpu', "
                                                   f"'cuda' or 'cuda:0', got {device!r}")):
        tf.Transformer(CFG, device=device)


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine where torch has no CUDA")
@pytest.mark.parametrize("build", [lambda d: tf.Transformer(CFG, device=d),
                                   lambda d: tf.CausalLM(CFG, device=d),
                                   lambda d: tf.Linear(4, 3, device=d),
                                   lambda d: tf.LayerNorm(4, device=d)],
                         ids=["Transformer", "CausalLM", "Linear", "LayerNorm"])
def test_cuda_without_cuda_is_named(build):
    with pytest.raises(ValueError, match=r"device: 'cuda' asked for, but torch.cuda.is_available\(\) "
                                         r"is False .*use device='cpu'"):
        build("cuda")


def test_cpu_device_arguments_still_build():
    for device in (None, "cpu", torch.device("cpu"), "cpu:0"):
        assert tf.Linear(4, 3, device=device).weight.device.type == "cpu"


@pytest.mark.parametrize("device", ["gpu", "cuda:7"] if not torch.cuda.is_available() else ["gpu"])
def test_to_torch_names_a_device_it_cannot_use(device):
    with pytest.raises(ValueError, match=re.escape(f"device: cannot place the model on {device!r} (")):
        tf.to_torch(nf.Linear(3, 2), device=device)


def test_load_model_names_a_device_it_cannot_use_before_reading(tmp_path):
    path = tf.save_checkpoint(tmp_path / "m.npz", tf.Transformer(CFG))
    with pytest.raises(ValueError, match=re.escape("device: expected a torch device such as 'cpu'")):
        tf.load_model(path, device="gpu")
    with pytest.raises(ValueError, match=re.escape("device: expected a torch device")):
        tf.load_model(tmp_path / "not-there.npz", device="gpu")
    assert tf.load_model(path, device="cpu").src_embed.weight.device.type == "cpu"
