"""torchformer dropout: replayed masks give the deterministic formula x*m/(1-p) (and its gradient),
drawn masks are recorded, masks cross between the twins by module name, attention-probability
dropout replays through the explicit path."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import npformer.attention as np_attn
import npformer.transformer as np_tr
from npformer.dropout import Dropout as NpDropout
from npformer.dropout import collect_dropout_masks as np_collect
from npformer.dropout import replay_dropout_masks as np_replay
from tests.torchformer.helpers import assert_close, randn, small_config
from torchformer.attention import set_need_weights
from torchformer.bridge import masks_to_numpy, to_torch
from torchformer.dropout import (Dropout, collect_dropout_masks, replay_dropout_masks,
                                 set_record_masks)
from torchformer.transformer import Transformer


@pytest.mark.parametrize("as_numpy", [False, True])
@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_replay_is_the_formula_forward_and_backward(p, as_numpy):
    gen = torch.Generator().manual_seed(0)
    x = randn(gen, 3, 4, 5, requires_grad=True)
    mask = torch.rand(3, 4, 5, generator=gen) >= p
    d = Dropout(p)
    d.replay(mask.numpy() if as_numpy else mask)
    y = d(x)
    g = randn(gen, 3, 4, 5)
    y.backward(g)
    keep = mask.double()
    assert_close("y", y, x.detach() * keep / (1 - p))
    assert_close("dx", x.grad, g * keep / (1 - p), kind="grad")
    assert torch.equal(d.last_mask, mask)
    assert torch.all(y[~mask] == 0)
    z = d(x)                                       # the replay was used once: a fresh draw now
    assert not d.replay_pending and d.last_mask is not None
    assert_close("fresh draw", z, x.detach() * d.last_mask / (1 - p))


def test_drawn_masks_are_recorded_and_have_the_right_rate():
    torch.manual_seed(0)
    d = Dropout(0.3)
    x = torch.ones(200, 500, dtype=torch.float64)
    y = d(x)
    m = d.last_mask
    assert m.dtype == torch.bool and m.shape == x.shape
    assert torch.equal(y, m.double() / 0.7)
    assert abs(m.double().mean().item() - 0.7) < 0.01          # 1e5 draws: sd 1.4e-3


def test_eval_and_p0_are_identity_and_refuse_replays():
    x = torch.randn(2, 3, dtype=torch.float64)
    for d in (Dropout(0.5).eval(), Dropout(0.0)):
        assert d(x) is x and d.last_mask is None
        d.replay(torch.ones(2, 3, dtype=torch.bool))
        with pytest.raises(RuntimeError, match="replay masks only into the same mode"):
            d(x)


def test_fused_mode_and_bad_masks():
    torch.manual_seed(1)
    d = Dropout(0.5)
    set_record_masks(d, False)
    x = torch.randn(4, 6, dtype=torch.float64)
    y = d(x)
    assert d.last_mask is None and torch.all((y == 0) | torch.isclose(y, 2 * x))
    mask = torch.rand(4, 6) > 0.5
    d.replay(mask)                                 # a replay is honoured even when fused
    assert torch.equal(d(x), x * mask / 0.5)
    with pytest.raises(TypeError, match="expected a bool numpy array or bool tensor"):
        d.replay(np.ones((4, 6)))
    d.replay(np.ones((4, 5), bool))
    with pytest.raises(ValueError, match=r"expected shape \(4, 6\) \(the input's\)"):
        d(x)
    with pytest.raises(ValueError, match="p: expected a float in"):
        Dropout(1.0)


def test_attention_dropout_replays_through_the_explicit_path():
    rng = np.random.default_rng(0)
    npm = np_attn.MultiHeadAttention(8, 2, dropout=0.4, dtype="float64", rng=rng)
    tm = to_torch(npm)
    assert not tm.need_weights
    q, kv = rng.standard_normal((2, 3, 8)), rng.standard_normal((2, 5, 8))
    out_np = npm(q, kv, kv)
    masks = np_collect(npm)
    assert set(masks) == {"attn_dropout"}
    replay_dropout_masks(tm, masks)
    out_t = tm(torch.as_tensor(q), torch.as_tensor(kv), torch.as_tensor(kv))
    assert tm.attn_weights is not None                          # explicit path was taken
    assert_close("output with replayed attention dropout", out_t, out_np)
    assert_close("weights (before dropout)", tm.attn_weights, npm.attn_weights)
    out_fast = tm(torch.as_tensor(q), torch.as_tensor(kv), torch.as_tensor(kv))   # SDPA dropout
    assert tm.attn_weights is None and tm.attn_dropout.last_mask is None
    assert out_fast.shape == out_t.shape


@pytest.mark.parametrize("direction", ["np_to_torch", "torch_to_np"])
def test_whole_model_masks_cross_between_twins(direction):
    c = small_config(dropout=0.3, attention_dropout=0.2, activation_dropout=0.25, final_norm=True)
    npm = np_tr.Transformer(c, seed=2)
    tm = to_torch(npm)
    set_need_weights(tm, True)                                  # attention masks are recorded
    src = np.array([[3, 4, 5, 0], [6, 7, 8, 9]])
    tgt = np.array([[1, 2, 3], [4, 5, 0]])
    ts, tt = torch.as_tensor(src), torch.as_tensor(tgt)
    if direction == "np_to_torch":
        ref = npm(src, tgt)
        masks = np_collect(npm)
        replay_dropout_masks(tm, masks)
        got = tm(ts, tt)
    else:
        torch.manual_seed(3)
        got = tm(ts, tt)
        masks = collect_dropout_masks(tm)
        np_replay(npm, masks_to_numpy(masks))
        ref = npm(src, tgt)
    names = {n for n, m in npm.named_modules() if isinstance(m, NpDropout)}
    assert set(masks) == names                                  # every Dropout drew a mask
    assert_close("logits", got, ref)


def test_replay_names_are_checked_before_anything_is_queued():
    c = small_config(dropout=0.1, num_encoder_layers=1, num_decoder_layers=1)
    tm = Transformer(c)
    good = {"src_dropout": torch.ones(1, 2, 16, dtype=torch.bool)}
    with pytest.raises(ValueError, match=r"unknown Dropout module names \['nope'\]"):
        replay_dropout_masks(tm, {**good, "nope": torch.ones(1, dtype=torch.bool)})
    assert not tm.src_dropout.replay_pending
    with pytest.raises(TypeError, match=r"masks\['src_dropout'\]"):
        replay_dropout_masks(tm, {"src_dropout": torch.ones(1, 2, 16)})
