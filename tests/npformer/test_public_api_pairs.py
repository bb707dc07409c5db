"""The functional forward/backward pairs, through the public API, against an independent gradient check.

The check itself (fourth-order finite differences, the error measure, the bound) is described in
tests/npformer/public_api_check.py."""
from __future__ import annotations

import numpy as np
import pytest

import npformer as nf
from tests.npformer.public_api_check import (
    assert_close,
    pair_check,
    rand,
)


def test_pair_linear():
    rng = np.random.default_rng(1)
    arrays = dict(x=rand(rng, 2, 3, 4), W=rand(rng, 5, 4), b=rand(rng, 5))
    assert_close(pair_check(lambda x, W, b: nf.linear_forward(x, W, b), nf.linear_backward, arrays,
                            ["x", "W", "b"]))


def test_pair_linear_without_bias():
    rng = np.random.default_rng(2)
    arrays = dict(x=rand(rng, 3, 4), W=rand(rng, 2, 4))
    out, cache = nf.linear_forward(arrays["x"], arrays["W"], None)
    assert nf.linear_backward(np.ones_like(out), cache)[2] is None
    assert_close(pair_check(lambda x, W: nf.linear_forward(x, W, None), nf.linear_backward, arrays,
                            ["x", "W"]))


def test_pair_embedding_padding_row_gets_nothing():
    rng = np.random.default_rng(3)
    ids = np.array([[1, 4, 4, 0], [2, 0, 3, 4]])
    W = rand(rng, 6, 5)
    out, cache = nf.embedding_forward(ids, W, 2.5, 0)
    assert np.array_equal(out, W[ids] * 2.5)
    dW = nf.embedding_backward(rng.standard_normal(out.shape), cache)
    assert np.all(dW[0] == 0)                                        # padding row: no gradient
    errs = pair_check(lambda W: nf.embedding_forward(ids, W, 2.5, 0), nf.embedding_backward,
                      {"W": W}, ["W"], exclude={"W": range(0, 5)})   # row 0 = entries 0..4
    assert_close(errs)


def test_pair_dropout_with_given_mask():
    rng = np.random.default_rng(4)
    x = rand(rng, 3, 7)
    mask = rng.random(x.shape) >= 0.3
    errs = pair_check(lambda x: nf.dropout_forward(x, 0.3, mask), nf.dropout_backward, {"x": x},
                      ["x"])
    assert_close(errs)


@pytest.mark.parametrize("name", ["relu", "gelu", "gelu_tanh"])
def test_pair_activations(name):
    rng = np.random.default_rng(5)
    x = rand(rng, 4, 6) * 3
    x = np.where(np.abs(x) < 0.05, 0.5, x)                   # keep ReLU's kink out of reach of 2h
    fwd, bwd = getattr(nf, f"{name}_forward"), getattr(nf, f"{name}_backward")
    assert_close(pair_check(lambda x: fwd(x), bwd, {"x": x}, ["x"]))


def test_pair_layernorm():
    rng = np.random.default_rng(6)
    arrays = dict(x=rand(rng, 2, 3, 5) * 2 + 1, gamma=rand(rng, 5), beta=rand(rng, 5))
    assert_close(pair_check(lambda x, gamma, beta: nf.layernorm_forward(x, gamma, beta, 1e-5),
                            nf.layernorm_backward, arrays, ["x", "gamma", "beta"]))


@pytest.mark.parametrize("which", ["softmax", "log_softmax"])
@pytest.mark.parametrize("axis", [-1, 0])
def test_pair_softmax_with_large_and_masked_logits(which, axis):
    rng = np.random.default_rng(7)
    x = rand(rng, 4, 5) * 3
    if axis == -1:
        x[1] += 1000.0                                       # one whole softmax row shifted:
    else:                                                    # large logits, no overflow
        x[:, 1] += 1000.0
    fwd, bwd = getattr(nf, f"{which}_forward"), getattr(nf, f"{which}_backward")
    assert_close(pair_check(lambda x: fwd(x, axis=axis), bwd, {"x": x}, ["x"]))

    # -inf entries: probability 0, gradient exactly 0 there; finite entries still right
    xm = rand(rng, 4, 5)
    ninf = np.zeros_like(xm, bool)
    ninf[0, 1] = ninf[2, 3] = ninf[3, 0] = True
    xm[ninf] = -np.inf
    out, cache = fwd(xm, axis=axis)
    g = rng.standard_normal(out.shape) * ~ninf
    dx = bwd(g, cache)
    assert np.isfinite(dx).all() and np.all(dx[ninf] == 0)
    flat_ninf = np.flatnonzero(ninf)
    errs = pair_check(lambda x: fwd(x, axis=axis), bwd, {"x": xm}, ["x"],
                      exclude={"x": flat_ninf}, g_mask=~ninf)
    assert_close(errs)


def test_softmax_fully_masked_row_is_zero_with_zero_gradient():
    x = np.array([[-np.inf, -np.inf, -np.inf], [0.0, 1.0, -np.inf]])
    y, cache = nf.softmax_forward(x)
    assert np.all(y[0] == 0) and np.isfinite(y).all()
    dx = nf.softmax_backward(np.array([[1.0, -2.0, 3.0], [0.5, 0.25, 0.0]]), cache)
    assert np.all(dx[0] == 0) and np.isfinite(dx).all()


@pytest.mark.parametrize("case", ["plain", "padding", "causal_fully_masked", "cross_dropout"])
def test_pair_sdpa(case):
    rng = np.random.default_rng(8)
    B, Hh, Tq, Tk, dk, dv = 2, 2, 3, 4, 5, 3
    if case != "cross_dropout":
        Tk = Tq
    q, k, v = rand(rng, B, Hh, Tq, dk), rand(rng, B, Hh, Tk, dk), rand(rng, B, Hh, Tk, dv)
    mask, dmask, p = None, None, 0.0
    if case == "padding":
        mask = np.array([[1, 1, 0], [1, 1, 1]], bool)[:, None, None, :]            # (B,1,1,Tk)
    elif case == "causal_fully_masked":
        mask = nf.causal_mask(Tq, Tq) & np.array([True, False])[:, None, None, None]  # batch 1 empty
    elif case == "cross_dropout":
        mask = nf.causal_mask(Tq, Tk).astype(np.int64)                              # 0/1 ints
        mask[..., 0, :] = 0                                                         # query 0: none
        p = 0.25
        dmask = rng.random((B, Hh, Tq, Tk)) >= p

    def fwd(q, k, v):
        return nf.sdpa_forward(q, k, v, mask=mask, dropout_mask=dmask, dropout_p=p)

    (out, w), cache = fwd(q, k, v)
    assert np.isfinite(out).all() and np.isfinite(w).all()
    if case == "causal_fully_masked":
        assert np.all(w[1] == 0) and np.all(out[1] == 0)
    if case == "cross_dropout":
        assert np.all(w[:, :, 0] == 0) and np.all(out[:, :, 0] == 0)
    errs = pair_check(fwd, nf.sdpa_backward, dict(q=q, k=k, v=v), ["q", "k", "v"], pick_out=0)
    assert_close(errs)
    # a fully masked batch entry passes exactly zero gradient to q, k and v
    if case == "causal_fully_masked":
        dq, dk_, dv_ = nf.sdpa_backward(rng.standard_normal(out.shape), cache)
        assert np.all(dq[1] == 0) and np.all(dk_[1] == 0) and np.all(dv_[1] == 0)


@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_pair_cross_entropy(smoothing):
    rng = np.random.default_rng(9)
    logits = rand(rng, 6, 4) * 2
    targets = np.array([1, -100, 3, 0, -100, 2])

    def fwd(logits):
        return nf.cross_entropy_forward(logits, targets, -100, smoothing)

    loss, cache = fwd(logits)
    # reference value written here: torch's semantics, mean over counted rows
    lp = logits - logits.max(1, keepdims=True)
    lp = lp - np.log(np.exp(lp).sum(1, keepdims=True))
    keep = targets != -100
    ref = -((1 - smoothing) * lp[keep, targets[keep]] + smoothing * lp[keep].mean(1)).mean()
    assert float(loss) == pytest.approx(ref, rel=1e-12)
    assert_close(pair_check(fwd, nf.cross_entropy_backward, {"logits": logits}, ["logits"]))
