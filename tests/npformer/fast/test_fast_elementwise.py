"""npformer.fast's elementwise functions against the plain ones of npformer.layers: bit for bit.

Every case runs with `split_everything` (tests/npformer/fast/conftest.py): each pass is split over
the threads and cut into blocks of a few elements, so the small arrays here go through the
threaded, blocked path; the shapes have 1 row, or a number of rows no thread count divides.
Outputs, caches and gradients must have the plain dtype and shape and the same bits.
"""
from __future__ import annotations

import numpy as np
import pytest

import npformer as nf
from npformer.fast import activations as fa
from npformer.fast import dropout as fd
from npformer.fast import layernorm as fl
from npformer.fast import loss as fce
from npformer.fast import softmax as fs
from npformer.layers import activations as pa
from npformer.layers import attention as pat
from npformer.layers import dropout as pd
from npformer.layers import layernorm as pl
from npformer.layers import loss as pce
from npformer.layers.softmax import log_softmax_forward

DTYPES = ["float32", "float64"]
THREADS = [1, 2, 3]
SHAPES = [(1, 1, 5), (1, 9), (7, 13), (2, 5, 33), (3, 3, 130)]      # 1 row; 7, 10, 9 rows


def same(got, want, what=""):
    """Identical arrays: shape, dtype and every bit (NaN where NaN)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    assert np.array_equal(got, want, equal_nan=True), \
        f"{what}: max |difference| {np.nanmax(np.abs(got.astype(float) - want.astype(float)))}"


def same_tuple(got, want, what=""):
    assert type(got) is type(want)
    for i, (g, w) in enumerate(zip(got, want)):
        if isinstance(w, np.ndarray):
            same(g, w, f"{what}[{i}]")
        else:
            assert g == w, f"{what}[{i}]: {g!r} != {w!r}"


def arrays(shape, dtype, n, seed=0, scale=3.0):
    rng = np.random.default_rng(seed)
    return [(scale * rng.standard_normal(shape)).astype(dtype) for _ in range(n)]


@pytest.mark.parametrize("name", ["relu", "gelu", "gelu_tanh"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("threads", THREADS)
def test_activations_equal_the_plain_ones(split_everything, name, dtype, shape, threads):
    x, g = arrays(shape, dtype, 2)
    if x.size >= 3:
        x.flat[:3] = [0.0, -0.0, 30.0]                             # ReLU's kink, a saturated tanh
    pf, pb = pa.ACTIVATION_PAIRS[name]
    ff, fb = fa.FAST_PAIRS[name]
    y0, c0 = pf(x)
    y1, c1 = ff(x, threads)
    same(y1, y0, "y")
    same_tuple(c1, c0, "cache")
    same(fb(g, c1, threads), pb(g, c0), "dx")
    if threads > 1 and shape[0] * (shape[1] if len(shape) == 3 else 1) > 1:
        assert max(split_everything) > 1                          # the threaded path ran


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES + [(4, 200)])
@pytest.mark.parametrize("threads", THREADS)
def test_layernorm_equals_the_plain_one(split_everything, monkeypatch, dtype, shape, threads):
    monkeypatch.setattr(fl, "MIN_COLUMNS", 1)                     # column sums split too
    x, g = arrays(shape, dtype, 2, seed=1)
    gamma, beta = arrays(shape[-1:], dtype, 2, seed=2)
    y0, c0 = pl.layernorm_forward(x, gamma, beta, 1e-5)
    y1, c1 = fl.layernorm_forward(x, gamma, beta, 1e-5, threads)
    same(y1, y0, "y")
    same_tuple(c1, c0, "cache")
    for i, (a, b) in enumerate(zip(fl.layernorm_backward(g, c1, threads),
                                   pl.layernorm_backward(g, c0))):
        same(a, b, ("dx", "dgamma", "dbeta")[i])
    if threads > 1:
        assert max(split_everything) > 1                          # the threaded path ran


def _masks(B, H, Tq, Tk):
    rng = np.random.default_rng(5)
    full = rng.random((B, H, Tq, Tk)) > 0.3
    full[0, 0, 0] = False                                          # a fully masked query row
    causal = np.tril(np.ones((Tq, Tk), dtype=bool))[None, None]
    padding = rng.random((B, 1, 1, Tk)) > 0.2
    return [None, full, causal, padding, np.ones((Tk,), dtype=bool)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bhqk", [(1, 1, 1, 1), (1, 1, 5, 7), (3, 2, 5, 4), (2, 5, 3, 3),
                                  (1, 2, 9, 9)])
@pytest.mark.parametrize("threads", THREADS)
def test_attention_softmax_equals_the_plain_one(split_everything, dtype, bhqk, threads):
    B, H, Tq, Tk = bhqk
    rng = np.random.default_rng(4)
    q = rng.standard_normal((B, H, Tq, 4)).astype(dtype)
    k = rng.standard_normal((B, H, Tk, 4)).astype(dtype)
    dw = rng.standard_normal((B, H, Tq, Tk)).astype(dtype)
    for keep in _masks(B, H, Tq, Tk):
        w0, c0 = pat.attention_weights_forward(q, k, keep)
        w1, c1 = fs.attention_weights_forward(q, k, keep, threads)
        same(w1, w0, "weights")
        same_tuple(c1, c0, "cache")
        dq0, dk0 = pat.attention_weights_backward(dw, c0)
        dq1, dk1 = fs.attention_weights_backward(dw, c1, threads)
        same(dq1, dq0, "dq")
        same(dk1, dk0, "dk")
    if threads > 1 and max(B, H, Tq) > 1:
        assert max(split_everything) > 1                          # the threaded path ran


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (1, 6), (7, 11), (10, 3)])
@pytest.mark.parametrize("threads", THREADS)
def test_log_softmax_rows_equals_the_plain_one(split_everything, dtype, shape, threads):
    (x,) = arrays(shape, dtype, 1, seed=6, scale=20.0)
    x[0, 0] = -np.inf
    if shape[0] > 2:
        x[2] = -np.inf                                             # an empty row stays -inf
    y0, c0 = log_softmax_forward(x, axis=-1)
    y1, c1 = fs.log_softmax_rows(x, threads)
    same(y1, y0, "y")
    same_tuple(c1, c0, "cache")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("N, C", [(1, 1), (1, 5), (7, 11), (10, 4)])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
@pytest.mark.parametrize("threads", THREADS)
def test_cross_entropy_equals_the_plain_one(split_everything, dtype, N, C, smoothing, threads):
    (logits,) = arrays((N, C), dtype, 1, seed=7)
    rng = np.random.default_rng(8)
    targets = rng.integers(0, C, N)
    if N > 2:
        targets[1] = -100                                          # ignored row
    for dout in (1.0, 0.37):
        l0, c0 = pce.cross_entropy_forward(logits, targets, -100, smoothing)
        l1, c1 = fce.cross_entropy_forward(logits, targets, -100, smoothing, threads)
        same(l1, l0, "loss")
        same_tuple(c1, c0, "cache")
        up = np.asarray(dout, dtype=dtype)
        same(fce.cross_entropy_backward(up, c1, threads), pce.cross_entropy_backward(up, c0),
             "dlogits")
    if threads > 1 and N > 1:
        assert max(split_everything) > 1                          # the threaded path ran


@pytest.mark.parametrize("bad", [
    dict(targets=np.array([0, 5])),                                # out of range
    dict(targets=np.array([-100, -100])),                          # every target ignored
    dict(targets=np.array([0.0, 1.0])),                            # not integers
    dict(targets=np.array([0, 1, 2])),                             # wrong length
    dict(logits=np.zeros((2, 2, 3))),                              # not 2-d
])
def test_cross_entropy_refuses_what_the_public_one_refuses_with_its_message(bad):
    args = {"logits": np.zeros((2, 3)), "targets": np.array([0, 1]), **bad}
    with pytest.raises((ValueError, TypeError)) as want:
        nf.cross_entropy_forward(args["logits"], args["targets"])     # the checked public pair
    with pytest.raises(type(want.value), match=str(want.value)[:40].replace("(", r"\(")
                       .replace(")", r"\)").replace("[", r"\[").replace("]", r"\]")):
        fce.cross_entropy_forward(args["logits"], args["targets"], threads=2)


@pytest.mark.parametrize("shape", [(1,), (1, 1, 3), (7, 9), (2, 3, 1000), (70000,)])
@pytest.mark.parametrize("p", [0.1, 0.5])
def test_blocked_mask_draw_is_the_plain_draw_and_leaves_the_generator_in_the_same_state(shape, p):
    a, b = np.random.default_rng(11), np.random.default_rng(11)
    want = a.random(shape) >= p
    same(fd.draw_keep_mask(b, shape, p), want, "mask")
    assert a.random() == b.random()                                # same stream position after


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("threads", THREADS)
def test_dropout_apply_equals_the_plain_one(split_everything, dtype, shape, threads):
    x, g = arrays(shape, dtype, 2, seed=9)
    mask = np.random.default_rng(10).random(shape) >= 0.3
    y0, c0 = pd.dropout_forward(x, 0.3, mask)
    y1, c1 = fd.dropout_forward(x, 0.3, mask, threads)
    same(y1, y0, "y")
    same_tuple(c1, c0, "cache")
    same(fd.dropout_backward(g, c1, threads), pd.dropout_backward(g, c0), "dx")
    y2, c2 = fd.dropout_forward(x, 0.3, None, threads)             # identity
    assert y2 is x and c2.mask is None
