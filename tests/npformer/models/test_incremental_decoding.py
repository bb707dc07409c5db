"""Incremental (KV-cached) decoding: the same logits as decoding the whole sequence at once, for
MultiHeadAttention, Transformer.decode and CausalLM; inference only; clear errors."""
import numpy as np
import pytest

from npformer.layers.attention import MultiHeadAttention
from npformer.layers.masks import causal_mask, padding_mask
from npformer.models.causal_lm import CausalLM
from npformer.models.transformer import Transformer
from tests.npformer.layer_helpers import jitter, tiny_config

SRC = np.array([[5, 3, 9, 2, 0],
                [7, 1, 0, 0, 0]])
TGT = np.array([[1, 4, 6, 3, 2, 0],
                [0, 1, 10, 8, 2, 5]])      # trailing pad in row 0, a leading pad in row 1
CHUNKS = [(0, 1), (1, 3), (3, 4), (4, 6)]  # feed 1, 2, 1, 2 tokens


def new_caches(n):
    return [{} for _ in range(n)]


def test_mha_cached_self_attention_equals_full():
    rng = np.random.default_rng(0)
    m = jitter(MultiHeadAttention(8, 2, dtype="float64", rng=rng))
    x = rng.standard_normal((2, 5, 8))
    full = m(x, x, x, mask=causal_mask(5))
    cache, steps = {}, []
    for t in range(5):
        xt = x[:, t:t + 1]
        steps.append(m(xt, xt, xt, mask=causal_mask(1, t + 1), cache=cache))
        assert cache["k"].shape == (2, 2, t + 1, 4)
    np.testing.assert_allclose(np.concatenate(steps, axis=1), full, rtol=1e-12, atol=1e-13)


def test_mha_static_kv_projects_memory_once():
    rng = np.random.default_rng(1)
    m = jitter(MultiHeadAttention(8, 2, dtype="float64", rng=rng))
    q, mem = rng.standard_normal((2, 3, 8)), rng.standard_normal((2, 4, 8))
    keep = padding_mask(SRC[:, :4], 0)
    full = m(q, mem, mem, mask=keep)
    cache = {}
    first = m(q[:, :2], mem, mem, mask=keep, cache=cache, static_kv=True)
    k_before = cache["k"]
    second = m(q[:, 2:], None, None, mask=keep, cache=cache, static_kv=True)   # memory not needed
    assert cache["k"] is k_before
    np.testing.assert_allclose(np.concatenate([first, second], 1), full, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("changes", [dict(), dict(norm_first=True, final_norm=True,
                                                  positional="learned", tie_embeddings=True)])
def test_transformer_cached_decode_equals_full_decode(changes):
    c = tiny_config(num_decoder_layers=2, num_encoder_layers=2, **changes)
    m = jitter(Transformer(c, seed=2)).eval()
    memory = m.encode(SRC)
    src_keep = padding_mask(SRC, 0)
    full = m.decode(TGT, memory, src_keep)
    np.testing.assert_allclose(full, m.forward(SRC, TGT), rtol=1e-12, atol=1e-13)  # decode = forward
    caches, steps = new_caches(2), []
    for a, b in CHUNKS:
        steps.append(m.decode(TGT[:, a:b], memory, src_keep, caches=caches, offset=a))
    np.testing.assert_allclose(np.concatenate(steps, axis=1), full, rtol=1e-12, atol=1e-13)
    assert caches[0]["self"]["k"].shape == (2, 2, 6, 4)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_causal_lm_cached_equals_full(dtype):
    c = tiny_config(num_decoder_layers=2, norm_first=True, activation="gelu_tanh",
                    positional="learned", final_norm=True, scale_embeddings=False,
                    tie_embeddings=True, dtype=dtype)
    m = CausalLM(c, seed=3).eval()
    full = m(TGT)
    caches, steps = new_caches(2), []
    for a, b in CHUNKS:
        steps.append(m(TGT[:, a:b], caches=caches, offset=a))
    out = np.concatenate(steps, axis=1)
    assert out.dtype == np.dtype(dtype)
    tol = 1e-12 if dtype == "float64" else 1e-5
    np.testing.assert_allclose(out, full, rtol=tol, atol=tol)


def test_cached_decoding_is_inference_only_and_checks_its_arguments():
    c = tiny_config(num_decoder_layers=2)
    lm = CausalLM(c, seed=4).eval()
    caches = new_caches(2)
    out = lm(TGT[:, :2], caches=caches)
    with pytest.raises(RuntimeError, match="backward called before forward|caches"):
        lm.backward(np.zeros_like(out))
    with pytest.raises(RuntimeError, match="incremental"):
        lm.decoder.backward(np.zeros((2, 2, 8)))
    with pytest.raises(ValueError, match="offset: expected 2"):
        lm(TGT[:, 2:3], caches=caches, offset=1)
    with pytest.raises(ValueError, match="ids.*max_len"):
        lm(np.ones((2, 5), int), caches=caches, offset=2)            # 2 + 5 > max_len 6
    with pytest.raises(ValueError, match="caches"):
        lm(TGT[:, 2:3], caches=new_caches(1), offset=0)
    with pytest.raises(ValueError, match="mask"):
        lm(TGT[:, 2:3], mask=causal_mask(1, 2), caches=caches, offset=2)   # must cover 3 keys
    lm(TGT[:, 2:3], mask=causal_mask(1, 3), caches=caches, offset=2)      # the right one is fine

    m = Transformer(c, seed=5).eval()
    memory = m.encode(SRC)
    caches = new_caches(2)
    m.decode(TGT[:, :1], memory, caches=caches)
    with pytest.raises(RuntimeError, match="backward called before forward"):
        m.backward(np.zeros((2, 1, 11)))
    with pytest.raises(ValueError, match="src_mask"):
        m.decode(TGT[:, 1:2], memory, np.ones((2, 1, 1, 4), bool), caches=caches, offset=1)
    # after an inference call, a full forward is trainable again
    logits = m(SRC, TGT)
    assert set(m.backward(np.ones_like(logits))) == {"encoder_input", "decoder_input"}
