"""torchformer attention: explicit path vs SDPA path, vs F.scaled_dot_product_attention and vs
torch.nn.MultiheadAttention (slow path), forward and backward, float64 (tolerances: helpers.py)."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from tests.torchformer.helpers import assert_close, assert_grads_close, perturb, randn
from torchformer.layers.attention import (
    MultiHeadAttention,
    scaled_dot_product_attention,
    sdpa_explicit,
    sdpa_fast,
    set_need_weights,
)
from torchformer.models.torch_nn import make_torch_nn_mha, mha_from_torch_nn, mha_to_torch_nn, to_torch_nn_attn_mask


def random_keep(gen, shape, p_keep=0.7, empty_rows=True):
    """A random keep-mask; with empty_rows, query row 0 of batch 0 (all heads) is fully masked."""
    keep = torch.rand(shape, generator=gen) < p_keep
    if empty_rows:
        keep[0, ..., 0, :] = False
    return keep


# ------------------------------------------------------------------------------------------------
# functional cores vs F.scaled_dot_product_attention
# ------------------------------------------------------------------------------------------------
def test_sdpa_on_fully_masked_rows_gives_zeros_on_this_torch():
    """The fact both paths are built to match: torch 2.13's SDPA (CPU) returns 0 on an empty row."""
    gen = torch.Generator().manual_seed(0)
    q, k, v = (randn(gen, 1, 1, 3, 4, requires_grad=True) for _ in range(3))
    keep = torch.ones(1, 1, 3, 3, dtype=torch.bool)
    keep[0, 0, 1] = False
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
    assert torch.equal(out[0, 0, 1], torch.zeros(4, dtype=torch.float64))
    out.backward(randn(gen, *out.shape))
    assert torch.equal(q.grad[0, 0, 1], torch.zeros(4, dtype=torch.float64))


@pytest.mark.parametrize("mask_shape", ["full", "padding", "none"])
@pytest.mark.parametrize("tq,tk", [(5, 5), (3, 7), (1, 1), (6, 2)])
def test_explicit_and_fast_match_torch_sdpa_forward_and_backward(mask_shape, tq, tk):
    gen = torch.Generator().manual_seed(tq * 10 + tk)
    B, H, dk, dv = 2, 3, 4, 5
    shape = {"full": (B, H, tq, tk), "padding": (B, 1, 1, tk), "none": None}[mask_shape]
    keep = None if shape is None else random_keep(gen, shape, empty_rows=mask_shape == "full")
    if mask_shape == "padding":
        keep[1, ..., :] = False                                  # batch 1: every row empty
    g = randn(gen, B, H, tq, dv)
    q0, k0, v0 = randn(gen, B, H, tq, dk), randn(gen, B, H, tk, dk), randn(gen, B, H, tk, dv)

    results = {}
    for name in ("torch", "explicit", "fast"):
        q, k, v = (t.clone().requires_grad_(True) for t in (q0, k0, v0))
        if name == "torch":
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
        elif name == "explicit":
            out, w = sdpa_explicit(q, k, v, keep)
            assert w.shape == (B, H, tq, tk)
        else:
            out = sdpa_fast(q, k, v, keep)
        out.backward(g)
        results[name] = (out, q.grad, k.grad, v.grad)
    for name in ("explicit", "fast"):
        for label, a, b in zip(("out", "dq", "dk", "dv"), results[name], results["torch"]):
            assert_close(f"{name}.{label}", a, b, kind="output" if label == "out" else "grad")
    if keep is not None:                                         # empty rows: exactly zero
        empty = ~keep.expand(B, H, tq, tk).any(-1)               # (B, H, Tq)
        for name in ("explicit", "fast"):
            out, dq = results[name][0], results[name][1]
            assert torch.all(out[empty] == 0) and torch.all(dq[empty] == 0), name


@pytest.mark.parametrize("mask_shape", [(2, 1, 3, 1), (1, 1, 1, 1), (2, 1, 1, 1)])
def test_fast_path_writes_out_a_mask_broadcast_over_the_keys(mask_shape, monkeypatch):
    """A keep-mask whose key axis is 1 (broadcast over every key) reaches SDPA with that axis
    written out at stride 1: CUDA's memory-efficient kernel refuses a stride-0 key axis, as at a
    cached decoding step. The result equals the explicit path's."""
    gen = torch.Generator().manual_seed(3)
    q, k, v = (randn(gen, (2, 2, 3, 4)), randn(gen, (2, 2, 5, 4)), randn(gen, (2, 2, 5, 4)))
    keep = torch.ones(mask_shape, dtype=torch.bool)
    if mask_shape[2] > 1:
        keep[1, 0, 1, 0] = False                             # one empty query row (not dropped)
    seen = []
    real = F.scaled_dot_product_attention

    def spy(q_, k_, v_, attn_mask=None, **kw):
        seen.append(None if attn_mask is None else (attn_mask.shape[-1], attn_mask.stride(-1)))
        return real(q_, k_, v_, attn_mask=attn_mask, **kw)
    monkeypatch.setattr("torchformer.layers.attention.F.scaled_dot_product_attention", spy)
    got = sdpa_fast(q, k, v, keep)
    want, _ = sdpa_explicit(q, k, v, keep)
    assert_close("sdpa_fast with a key-broadcast mask", got, want)
    assert seen and all(m is None or m == (5, 1) for m in seen), seen


def test_explicit_weights_are_softmax_probabilities_with_zero_rows():
    gen = torch.Generator().manual_seed(1)
    q, k, v = randn(gen, 2, 2, 4, 3), randn(gen, 2, 2, 6, 3), randn(gen, 2, 2, 6, 3)
    keep = random_keep(gen, (2, 2, 4, 6))
    _, w = sdpa_explicit(q, k, v, keep)
    # reference written independently: masked scores to -inf, softmax, per row
    s = (q @ k.transpose(-1, -2)) / 3 ** 0.5
    for b, h, i in torch.cartesian_prod(torch.arange(2), torch.arange(2), torch.arange(4)):
        row = keep[b, h, i]
        if not row.any():
            assert torch.all(w[b, h, i] == 0)
            continue
        ref = torch.zeros(6, dtype=torch.float64)
        ref[row] = torch.softmax(s[b, h, i][row], dim=0)
        assert_close(f"weights[{b},{h},{i}]", w[b, h, i], ref)


def test_public_sdpa_checks_and_paths():
    """torchformer.scaled_dot_product_attention checks its arguments, then runs the plain one."""
    import torchformer as tf
    gen = torch.Generator().manual_seed(2)
    q, k, v = randn(gen, 1, 2, 3, 4), randn(gen, 1, 2, 5, 4), randn(gen, 1, 2, 5, 4)
    out_w, w = tf.scaled_dot_product_attention(q, k, v)
    out_f, none = tf.scaled_dot_product_attention(q, k, v, need_weights=False)
    assert none is None and w.shape == (1, 2, 3, 5)
    assert_close("public fast vs explicit", out_f, out_w)
    with pytest.raises(ValueError, match="k: expected shape"):
        tf.scaled_dot_product_attention(q, k[..., :3], v)
    with pytest.raises(ValueError, match="mask: expected a shape broadcastable"):
        tf.scaled_dot_product_attention(q, k, v, mask=torch.ones(2, 3, dtype=torch.bool))
    with pytest.raises(ValueError, match="dropout_mask"):
        tf.scaled_dot_product_attention(q, k, v, dropout_mask=torch.ones(1, 2, 3, 4, dtype=torch.bool),
                                        dropout_p=0.5)
    with pytest.raises(ValueError, match=r"^dropout_p: expected a float in \[0, 1\), got 1.0"):
        tf.scaled_dot_product_attention(q, k, v, dropout_p=1.0)
    # an integer 0/1 numpy mask is turned into a bool one before the plain function runs
    keep = np.ones((1, 1, 3, 5), dtype=np.int64)
    keep[..., -1] = 0
    out_m, w_m = tf.scaled_dot_product_attention(q, k, v, mask=keep)
    assert torch.all(w_m[..., -1] == 0)
    plain, _ = scaled_dot_product_attention(q, k, v, torch.from_numpy(keep != 0))
    assert_close("checked vs plain", out_m, plain)


# ------------------------------------------------------------------------------------------------
# MultiHeadAttention: explicit vs SDPA path
# ------------------------------------------------------------------------------------------------
def _mha_run(mha, query, key, value, keep, g):
    mha.zero_grad()
    tq, tk, tv = (t.clone().requires_grad_(True) for t in (query, key, value))
    out = mha(tq, tk, tv, keep)
    out.backward(g)
    grads = {n: p.grad.clone() for n, p in mha.named_parameters()}
    return out.detach(), tq.grad, tk.grad, tv.grad, grads


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("tq,tk", [(4, 4), (3, 6), (1, 2)])
def test_mha_explicit_path_equals_sdpa_path(bias, tq, tk):
    gen = torch.Generator().manual_seed(tq + 7 * tk)
    mha = MultiHeadAttention(12, 3, bias=bias, dtype="float64")
    perturb(mha, gen)
    B = 3
    query, key, value = randn(gen, B, tq, 12), randn(gen, B, tk, 12), randn(gen, B, tk, 12)
    keep = random_keep(gen, (B, 3, tq, tk))
    keep[1, :, -1, :] = False                                    # another empty row, every head
    g = randn(gen, B, tq, 12)
    mha.need_weights = False
    fast = _mha_run(mha, query, key, value, keep, g)
    assert mha.attn_weights is None
    set_need_weights(mha, True)
    slow = _mha_run(mha, query, key, value, keep, g)
    assert mha.attn_weights.shape == (B, 3, tq, tk)
    for label, a, b in zip(("out", "dquery", "dkey", "dvalue"), slow[:4], fast[:4]):
        assert_close(label, a, b, kind="output" if label == "out" else "grad")
    assert_grads_close(slow[4], fast[4])
    # a query row masked in every head reads nothing: its query gradient is exactly 0
    for path in (slow, fast):
        assert torch.all(path[1][0, 0] == 0) and torch.all(path[1][1, -1] == 0)


# ------------------------------------------------------------------------------------------------
# MultiHeadAttention vs torch.nn.MultiheadAttention (slow path)
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("kind", ["self", "cross"])
def test_mha_matches_torch_nn_multihead_attention(bias, kind):
    gen = torch.Generator().manual_seed(3 + bias)
    D, H, B, tq = 16, 4, 2, 5
    tk = tq if kind == "self" else 7
    ours = MultiHeadAttention(D, H, bias=bias, dtype="float64", need_weights=True)
    perturb(ours, gen)
    ref = make_torch_nn_mha(D, H, bias=bias, dtype="float64")
    ref.load_state_dict(mha_to_torch_nn(ours.state_dict()))
    ref.train()                                                  # slow path (dropout is 0)

    query = randn(gen, B, tq, D)
    key = query.clone() if kind == "self" else randn(gen, B, tk, D)
    value = query.clone() if kind == "self" else randn(gen, B, tk, D)
    keep = random_keep(gen, (B, H, tq, tk), empty_rows=False)
    keep[..., 0] = True                                          # no empty rows: nn.MHA gives NaN
    g = randn(gen, B, tq, D)

    o = _mha_run(ours, query, key, value, keep, g)
    w_ours = ours.attn_weights.detach()
    rq, rk, rv = (t.clone().requires_grad_(True) for t in (query, key, value))
    out, w = ref(rq, rk, rv, attn_mask=to_torch_nn_attn_mask(keep, B, H, tq, tk),
                 need_weights=True, average_attn_weights=False)
    out.backward(g)
    assert_close("output", o[0], out)
    assert_close("attn_weights", w_ours, w)
    for label, a, b in zip(("dquery", "dkey", "dvalue"), o[1:4], (rq.grad, rk.grad, rv.grad)):
        assert_close(label, a, b, kind="grad")
    ref_grads = mha_from_torch_nn({n: p.grad for n, p in ref.named_parameters()})
    assert_grads_close(o[4], ref_grads)


def test_mha_float32_matches_torch_nn_loosely():
    gen = torch.Generator().manual_seed(5)
    ours = MultiHeadAttention(16, 2, dtype="float32", need_weights=True)
    perturb(ours, gen)
    ref = make_torch_nn_mha(16, 2, dtype="float32")
    ref.load_state_dict(mha_to_torch_nn(ours.state_dict()))
    x = randn(gen, 2, 6, 16, dtype=torch.float32)
    g = randn(gen, 2, 6, 16, dtype=torch.float32)
    o = _mha_run(ours, x, x, x, None, g)
    rx = x.clone().requires_grad_(True)
    out, _ = ref(rx, rx, rx, need_weights=True, average_attn_weights=False)
    out.backward(g)
    assert_close("output f32", o[0], out, dtype="float32")
    assert_close("dx f32", o[1] + o[2] + o[3], rx.grad, dtype="float32", kind="grad")
