"""A call without caches at positions offset.. (`CausalLM(ids, offset=k)`, `Transformer.decode(...,
offset=k)`) attends over its own T tokens, as npformer's does: the twins agree on the logits and on
the explicit masks such a call accepts (float64, a random upstream gradient for the input gradient)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import npformer.models.causal_lm as np_lm
import npformer.models.transformer as np_tr
from tests.torchformer.helpers import small_config
from torchformer.models.bridge import to_torch

OFFSET = 3
IDS = np.array([[4, 6, 3, 2, 0, 0],
                [1, 10, 8, 2, 5, 7]])     # two trailing pads in row 0
SRC = np.array([[5, 3, 9, 2, 0],
                [7, 1, 0, 0, 0]])


@pytest.mark.parametrize("positional", ["sinusoidal", "learned"])
def test_causal_lm_at_an_offset_without_caches_matches_npformer(positional):
    npm = np_lm.CausalLM(small_config(positional=positional), seed=2)
    tm = to_torch(npm)
    want = npm(IDS, offset=OFFSET)
    got = tm(torch.from_numpy(IDS), offset=OFFSET)
    np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-12, atol=1e-12)
    upstream = np.random.default_rng(0).standard_normal(want.shape)
    npm.zero_grad()
    want_dx = npm.backward(upstream)["decoder_input"]
    got.backward(torch.from_numpy(upstream))
    np.testing.assert_allclose(tm.decoder_input.grad.numpy(), want_dx, rtol=1e-10, atol=1e-12)
    keep = np.ones((2, IDS.shape[1]), dtype=bool)                  # (B, T): the call's own keys
    np.testing.assert_allclose(tm(torch.from_numpy(IDS), offset=OFFSET,
                                  key_keep=torch.from_numpy(keep)).detach().numpy(),
                               npm(IDS, offset=OFFSET, key_keep=keep), rtol=1e-12, atol=1e-12)


def test_transformer_decode_at_an_offset_without_caches_matches_npformer():
    npm = np_tr.Transformer(small_config(), seed=2).eval()
    tm = to_torch(npm).eval()
    want = npm.decode(IDS, npm.encode(SRC), offset=OFFSET)
    src, tgt = torch.from_numpy(SRC), torch.from_numpy(IDS)
    with torch.no_grad():
        got = tm.decode(tgt, tm.encode(src), offset=OFFSET)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
