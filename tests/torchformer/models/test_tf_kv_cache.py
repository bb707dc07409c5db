"""Incremental (KV-cache) decoding equals full decoding: MultiHeadAttention, CausalLM and
Transformer.decode, both attention paths, float64; and it equals npformer's incremental decode."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import npformer.models.causal_lm as np_lm
from tests.torchformer.helpers import assert_close, perturb, randn, small_config
from torchformer.layers.attention import MultiHeadAttention, set_need_weights
from torchformer.layers.masks import causal_mask
from torchformer.models.bridge import to_torch
from torchformer.models.causal_lm import CausalLM
from torchformer.models.decoder import new_caches
from torchformer.models.transformer import Transformer

CHUNKS = [(3, 1, 1, 2), (1, 1, 1, 1, 1, 1, 1)]     # prompt then steps; both sum to 7


@pytest.mark.parametrize("need_weights", [False, True])
def test_mha_self_and_cross_cache(need_weights):
    gen = torch.Generator().manual_seed(0)
    mha = MultiHeadAttention(8, 2, dtype="float64", need_weights=need_weights).eval()
    perturb(mha, gen)
    x, mem = randn(gen, 2, 5, 8), randn(gen, 2, 4, 8)
    full = mha(x, x, x, causal_mask(5, 5))
    cache, outs, t = {}, [], 0
    for n in (2, 1, 2):
        xi = x[:, t:t + n]
        outs.append(mha(xi, xi, xi, causal_mask(n, t + n), cache=cache))
        t += n
        assert cache["k"].shape == (2, 2, t, 4)
    assert_close("self-attention incremental", torch.cat(outs, 1), full)
    full_cross = mha(x, mem, mem)
    cross = {}
    first = mha(x[:, :2], mem, mem, cache=cross, static_kv=True)
    k_id = id(cross["k"])
    second = mha(x[:, 2:], None, None, cache=cross, static_kv=True)     # keys/values reused
    assert id(cross["k"]) == k_id
    assert_close("cross-attention static_kv", torch.cat([first, second], 1), full_cross)


@pytest.mark.parametrize("chunks", CHUNKS)
@pytest.mark.parametrize("layout", ["paper", "gpt"])
@pytest.mark.parametrize("need_weights", [False, True])
def test_causal_lm_incremental_equals_full(chunks, layout, need_weights):
    extra = {} if layout == "paper" else dict(norm_first=True, final_norm=True,
                                              positional="learned", activation="gelu_tanh")
    c = small_config(**extra)
    gen = torch.Generator().manual_seed(1)
    m = CausalLM(c).eval()
    perturb(m, gen)
    set_need_weights(m, need_weights)
    ids = torch.tensor([[0, 3, 4, 5, 6, 7, 8], [2, 3, 0, 9, 1, 1, 2]])   # padding inside
    with torch.no_grad():
        full = m(ids)
        caches, outs, t = new_caches(c.num_decoder_layers), [], 0
        for n in chunks:
            outs.append(m(ids[:, t:t + n], caches=caches, offset=t))
            t += n
    inc = torch.cat(outs, 1)
    # a query whose only visible key is padding (row 0, position 0) is fully masked: compare the rest
    assert_close("logits", inc[:, 1:], full[:, 1:])
    assert_close("logits[1, 0]", inc[1, 0], full[1, 0])
    assert caches[0]["tgt_keep"].shape == (2, 7)


def test_transformer_decode_incremental_equals_full():
    c = small_config(final_norm=True)
    gen = torch.Generator().manual_seed(2)
    m = Transformer(c).eval()
    perturb(m, gen)
    src = torch.tensor([[4, 5, 6, 0, 0], [7, 8, 9, 10, 11]])
    tgt = torch.tensor([[1, 2, 3, 4, 5, 6], [6, 5, 4, 3, 2, 1]])
    src_keep = (src != 0)[:, None, None, :]
    with torch.no_grad():
        full = m(src, tgt)
        memory = m.encode(src)
        assert_close("decode == forward", m.decode(tgt, memory, src_keep), full)
        caches, outs = new_caches(c.num_decoder_layers), []
        for t in range(6):
            outs.append(m.decode(tgt[:, t:t + 1], memory, src_keep, caches=caches, offset=t))
    assert_close("incremental decode", torch.cat(outs, 1), full)


def test_incremental_decode_matches_npformers():
    c = small_config(norm_first=True, final_norm=True)
    npm = np_lm.CausalLM(c, seed=5).eval()
    tm = to_torch(npm).eval()
    ids = np.array([[3, 4, 5, 6, 7], [8, 0, 9, 10, 11]])
    np_caches, t_caches = [{} for _ in range(c.num_decoder_layers)], new_caches(
        c.num_decoder_layers)
    for t, n in ((0, 2), (2, 1), (3, 2)):
        a = npm(ids[:, t:t + n], caches=np_caches, offset=t)
        with torch.no_grad():
            b = tm(torch.as_tensor(ids[:, t:t + n]), caches=t_caches, offset=t)
        assert_close(f"step at {t}", b, a)


def test_cache_errors():
    c = small_config()
    m = CausalLM(c).eval()
    caches = new_caches(c.num_decoder_layers)
    with torch.no_grad():
        m(torch.tensor([[1, 2]]), caches=caches)
        with pytest.raises(ValueError, match=r"offset: expected 2 \(the positions the caches hold\)"):
            m(torch.tensor([[3]]), caches=caches, offset=1)
        with pytest.raises(ValueError, match="caches: expected a list of 2 dicts"):
            m(torch.tensor([[3]]), caches=caches[:1], offset=2)
        with pytest.raises(ValueError, match="cache: holds keys for batch 1, query has batch 2"):
            m(torch.tensor([[3], [4]]), caches=caches, offset=2)
        with pytest.raises(ValueError, match="max_len=32"):
            m(torch.ones(1, 31, dtype=torch.long), caches=caches, offset=2)
