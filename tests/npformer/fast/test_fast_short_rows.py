"""npformer.fast's one-piece attention paths against the plain ones: bit for bit.

Without `split_everything`, small arrays take the path a real small model takes: the passes in one
piece, the row max of short rows (npformer.fast.softmax.row_max) reduced down the columns of a
transposed copy, and the per-head products written straight into the merged-heads layout
(npformer.fast.attention.merged_product). The shapes have at least MIN_SHORT_ROWS rows of at most
SHORT_ROW keys (the transposed branch), and also one row, or rows just past SHORT_ROW (the plain
branch); non-finite scores, fully masked rows, all-True masks and non-contiguous inputs are included.
"""
from __future__ import annotations

import copy

import numpy as np
import pytest

from npformer.fast import activations as fa
from npformer.fast import softmax as fs
from npformer.fast.accelerate import accelerate
from npformer.fast.attention import merged_product
from npformer.layers import activations as pa
from npformer.layers import attention as pat
from npformer.layers.attention import MultiHeadAttention, merge_heads, split_heads

DTYPES = ["float32", "float64"]


def same(got, want, what=""):
    """Identical arrays: shape, dtype and every value (NaN where NaN, the sign of a zero too)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    assert np.array_equal(got, want, equal_nan=True), f"{what}: values differ"
    assert np.array_equal(np.signbit(got), np.signbit(want)), f"{what}: signs differ"


def takes_transposed_branch(shape) -> bool:
    T = shape[-1]
    return T <= fs.SHORT_ROW and int(np.prod(shape)) >= T * fs.MIN_SHORT_ROWS


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 5, 13, 7), (2, 2, 40, 64), (130, 1), (1, 1, 1, 9),
                                   (2, 2, 33, 65), (64, 1)])
def test_row_max_is_the_plain_max(dtype, shape):
    rng = np.random.default_rng(0)
    s = (3 * rng.standard_normal(shape)).astype(dtype)
    if s.ndim == 4 and s.shape[-2] > 2:
        s[0, 0, 0] = -np.inf                                      # a fully masked row
        s[0, 0, 1, 0] = np.nan                                    # NaN propagates
        s[0, 0, 2, -1] = np.inf
    same(fs.row_max(s), s.max(axis=-1, keepdims=True), "row max")
    view = s.swapaxes(-1, -2) if s.ndim >= 2 else s               # a non-contiguous input
    same(fs.row_max(view), view.max(axis=-1, keepdims=True), "row max of a view")


def test_the_shapes_above_reach_both_branches():
    assert takes_transposed_branch((3, 5, 13, 7)) and takes_transposed_branch((2, 2, 40, 64))
    assert not takes_transposed_branch((2, 2, 33, 65)) and not takes_transposed_branch((1, 1, 1, 9))


def _masks(B, H, Tq, Tk):
    rng = np.random.default_rng(5)
    full = rng.random((B, H, Tq, Tk)) > 0.3
    full[0, 0, 0] = False                                          # a fully masked query row
    causal = np.tril(np.ones((Tq, Tk), dtype=bool))[None, None]
    padding = rng.random((B, 1, 1, Tk)) > 0.2
    no_padding = np.ones((B, 1, 1, Tk), dtype=bool)                # all True: the masking skipped
    return [None, full, causal, padding, no_padding]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bhqk", [(3, 2, 13, 11), (2, 4, 32, 32), (1, 1, 1, 5), (1, 3, 70, 66)])
@pytest.mark.parametrize("threads", [1, 2])
def test_one_piece_attention_weights_equal_the_plain_ones(dtype, bhqk, threads):
    B, H, Tq, Tk = bhqk
    rng = np.random.default_rng(4)
    q = rng.standard_normal((B, H, Tq, 8)).astype(dtype)
    k = rng.standard_normal((B, H, Tk, 8)).astype(dtype)
    dw = rng.standard_normal((B, H, Tq, Tk)).astype(dtype)
    for keep in _masks(B, H, Tq, Tk):
        w0, c0 = pat.attention_weights_forward(q, k, keep)
        w1, c1 = fs.attention_weights_forward(q, k, keep, threads)
        same(w1, w0, "weights")
        same(c1.weights, c0.weights, "cached weights")
        assert c1.scale == c0.scale
        d0 = pat.attention_weights_backward(dw, c0)
        d1 = fs.attention_weights_backward(dw, c1, threads)
        same(d1[0], d0[0], "dq")
        same(d1[1], d0[1], "dk")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", [((1, 1, 1, 1), (1, 1, 1, 3)), ((2, 3, 5, 7), (2, 3, 7, 4)),
                                    ((3, 4, 9, 9), (3, 4, 9, 16)), ((1, 3, 5, 7), (2, 3, 7, 4))])
def test_merged_product_is_merge_heads_of_the_product(dtype, shapes):
    rng = np.random.default_rng(1)
    a = rng.standard_normal(shapes[0]).astype(dtype)
    b = rng.standard_normal(shapes[1]).astype(dtype)
    same(merged_product(a, b), merge_heads(a @ b), "contiguous inputs")
    at = np.ascontiguousarray(a.swapaxes(-1, -2)).swapaxes(-1, -2)        # strided views
    bh = split_heads(merge_heads(b), b.shape[1])
    same(merged_product(at, bh), merge_heads(at @ bh), "views")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("cross", [False, True])
def test_accelerated_attention_equals_the_plain_module(dtype, threads, cross):
    D, H, B, Tq = 32, 4, 3, 11
    Tk = 7 if cross else Tq
    plain = MultiHeadAttention(D, H, dropout=0.2, dtype=dtype, rng=np.random.default_rng(2))
    plain.attn_dropout.rng = np.random.default_rng(9)
    fast = accelerate(copy.deepcopy(plain), threads)
    rng = np.random.default_rng(3)
    query = rng.standard_normal((B, Tq, D)).astype(dtype)
    kv = query if not cross else rng.standard_normal((B, Tk, D)).astype(dtype)
    mask = np.tril(np.ones((Tq, Tk), dtype=bool)) if not cross else rng.random((B, 1, 1, Tk)) > 0.3
    dout = rng.standard_normal((B, Tq, D)).astype(dtype)
    assert takes_transposed_branch((B, H, Tq, Tk))
    for m in (plain, fast):
        m.train()
        m.zero_grad()
    y0, y1 = plain(query, kv, kv, mask), fast(query, kv, kv, mask)
    same(y1, y0, "output")
    same(fast.attn_weights, plain.attn_weights, "attn_weights")
    for i, (g1, g0) in enumerate(zip(fast.backward(dout), plain.backward(dout))):
        same(g1, g0, ("dquery", "dkey", "dvalue")[i])
    for (name, p0), (_, p1) in zip(plain.named_parameters(), fast.named_parameters()):
        same(p1.grad, p0.grad, f"{name}.grad")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1, 1), (3, 7, 33), (8, 32, 64)])
def test_relu_on_threads_in_one_piece_equals_the_plain_one(dtype, shape):
    rng = np.random.default_rng(6)
    x = (3 * rng.standard_normal(shape)).astype(dtype)
    x.flat[0] = -0.0
    g = rng.standard_normal(shape).astype(dtype)
    y0, c0 = pa.relu_forward(x)
    y1, c1 = fa.relu_forward(x, 2)                                # too small to split: one piece
    same(y1, y0, "y")
    same(c1.positive, c0.positive, "mask")
    same(fa.relu_backward(g, c1, 2), pa.relu_backward(g, c0), "dx")
