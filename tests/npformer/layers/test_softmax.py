"""Softmax and log-softmax: stability with huge logits, -inf entries and fully masked rows."""
import math

import numpy as np
import pytest

from npformer.checks.gradcheck import check_pair
from npformer.layers.softmax import log_softmax_backward, log_softmax_forward, softmax_backward, softmax_forward

TOL = 1e-6


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def test_softmax_matches_scalar_reference():
    x = rnd(3, 5) * 3
    y, _ = softmax_forward(x)
    for r in range(3):
        e = [math.exp(v) for v in x[r]]
        assert np.allclose(y[r], [v / sum(e) for v in e], rtol=1e-14)
    ly, _ = log_softmax_forward(x)
    assert np.allclose(ly, np.log(y), rtol=1e-13)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_gradients(axis):
    x = rnd(3, 4, 5)
    for fwd, bwd in ((softmax_forward, softmax_backward),
                     (log_softmax_forward, log_softmax_backward)):
        rep = check_pair(fwd, bwd, (x,), axis=axis)
        assert rep.passed and rep.max_error < TOL, str(rep)


def test_huge_logits():
    x = np.array([[1000.0, 1001.0, 1002.0], [1e300, -1e300, 0.0]])
    y, _ = softmax_forward(x)
    ly, _ = log_softmax_forward(x)
    small = np.array([0.0, 1.0, 2.0])
    assert np.allclose(y[0], np.exp(small) / np.exp(small).sum(), rtol=1e-14)
    assert np.array_equal(y[1], [1.0, 0.0, 0.0])
    assert np.allclose(ly[0], small - np.log(np.exp(small).sum()), rtol=1e-14)
    assert ly[1, 0] == 0.0 and np.all(np.isfinite(y))


def test_neg_inf_entries_get_zero_probability_and_zero_gradient():
    x = np.array([[0.5, -np.inf, 1.5, -np.inf]])
    y, cache = softmax_forward(x)
    assert y[0, 1] == 0 and y[0, 3] == 0
    assert np.allclose(y[0, [0, 2]], softmax_forward(np.array([[0.5, 1.5]]))[0][0], rtol=1e-15)
    g = rnd(1, 4)
    dx = softmax_backward(g, cache)
    assert dx[0, 1] == 0 and dx[0, 3] == 0 and np.all(np.isfinite(dx))
    # the finite entries get the gradient of the softmax over the finite entries alone
    sub, sub_cache = softmax_forward(np.array([[0.5, 1.5]]))
    assert np.allclose(dx[0, [0, 2]], softmax_backward(g[:, [0, 2]], sub_cache)[0], rtol=1e-14)
    ly, lcache = log_softmax_forward(x)
    assert ly[0, 1] == -np.inf and np.all(np.isfinite(log_softmax_backward(g, lcache)))


def test_fully_masked_rows_give_zeros_not_nan():
    x = np.array([[-np.inf, -np.inf, -np.inf], [0.0, 1.0, 2.0]])
    y, cache = softmax_forward(x)
    assert np.array_equal(y[0], [0.0, 0.0, 0.0]) and np.isclose(y[1].sum(), 1.0)
    dx = softmax_backward(rnd(2, 3), cache)
    assert np.array_equal(dx[0], [0.0, 0.0, 0.0]) and not np.any(np.isnan(dx))
    ly, _ = log_softmax_forward(x)
    assert np.all(ly[0] == -np.inf) and np.all(np.isfinite(ly[1]))


def test_float32_stays_float32():
    x = rnd(2, 3).astype(np.float32)
    y, c = softmax_forward(x)
    ly, lc = log_softmax_forward(x)
    g = np.ones((2, 3), np.float32)
    assert y.dtype == ly.dtype == np.float32
    assert softmax_backward(g, c).dtype == log_softmax_backward(g, lc).dtype == np.float32
