"""Embedding: lookup, scale, padding row without gradient, repeated ids summing."""
import math

import numpy as np
import pytest

from npformer.checks.gradcheck import check_pair, gradcheck
from npformer.layers.embedding import Embedding, embedding_backward, embedding_forward

TOL = 1e-6


def test_forward_is_scaled_lookup():
    W = np.random.default_rng(0).standard_normal((6, 3))
    ids = np.array([[0, 5, 5], [2, 1, 0]])
    y, _ = embedding_forward(ids, W, 2.5, None)
    for b in range(2):
        for t in range(3):
            assert np.array_equal(y[b, t], W[ids[b, t]] * 2.5)


def test_backward_sums_repeated_ids_and_zeroes_padding_row():
    rng = np.random.default_rng(1)
    W = rng.standard_normal((6, 3))
    ids = np.array([[0, 5, 5], [2, 5, 0]])
    g = rng.standard_normal((2, 3, 3))
    _, cache = embedding_forward(ids, W, 2.0, 0)
    dW = embedding_backward(g, cache)
    expect = np.zeros_like(W)
    for b in range(2):
        for t in range(3):
            if ids[b, t] != 0:
                expect[ids[b, t]] += 2.0 * g[b, t]
    assert np.allclose(dW, expect, rtol=1e-14, atol=1e-15)
    assert np.all(dW[0] == 0) and np.all(dW[3] == 0)


def test_pair_gradient_without_padding():
    W = np.random.default_rng(2).standard_normal((5, 4))
    ids = np.array([[1, 4, 4, 0], [3, 3, 2, 1]])
    rep = check_pair(embedding_forward, embedding_backward, (ids, W, math.sqrt(4), None))
    assert rep.passed and rep.max_error < TOL, str(rep)


def test_module_gradcheck_with_padding():
    e = Embedding(7, 4, padding_idx=0, scale=2.0, dtype="float64", rng=np.random.default_rng(0))
    e.weight.data[0] = 0.3                            # even a non-zero padding row gets no gradient
    ids = np.array([[1, 0, 3, 3], [6, 0, 1, 1]])
    rep = gradcheck(e, ids)
    assert rep.passed and rep.max_error < TOL, str(rep)
    assert np.all(e.weight.grad[0] == 0)              # analytic gradient of the padding row
    assert np.any(e.weight.grad[1] != 0)


def test_init_and_names():
    e = Embedding(50, 16, padding_idx=3, rng=np.random.default_rng(0))
    assert [n for n, _ in e.named_parameters()] == ["weight"]
    assert e.weight.shape == (50, 16) and e.weight.dtype == np.float32
    assert np.all(e.weight.data[3] == 0)
    std = e.weight.data[np.arange(50) != 3].std()
    assert 0.8 * 16 ** -0.5 < std < 1.2 * 16 ** -0.5  # N(0, d^-1/2), 784 draws


def test_backward_returns_none_and_accumulates():
    e = Embedding(5, 2, dtype="float64")
    ids = np.array([[1, 2]])
    e(ids)
    g = np.random.default_rng(0).standard_normal((1, 2, 2))
    assert e.backward(g) is None
    e(ids)                                  # a second backward needs a second forward (as torch)
    e.backward(g)
    assert np.allclose(e.weight.grad[1], 2 * g[0, 0])


def test_float32_stays_float32():
    e = Embedding(5, 2, scale=math.sqrt(2))
    y = e(np.array([[1, 2]]))
    assert y.dtype == np.float32
    e.backward(np.ones((1, 2, 2), np.float32))
    assert e.weight.grad.dtype == np.float32


def test_output_is_not_a_view_of_the_table():
    e = Embedding(5, 2)
    y = e(np.array(3))                                # 0-d ids: one row
    y[...] = 100
    assert not np.any(e.weight.data == 100)


def test_bad_input():
    e = Embedding(5, 2, padding_idx=0)
    with pytest.raises(ValueError, match=r"ids: expected token ids in \[0, 5\)"):
        e(np.array([[1, 5]]))
    with pytest.raises(ValueError, match=r"ids: expected token ids"):
        e(np.array([[-1, 2]]))
    with pytest.raises(TypeError, match="ids: expected integer"):
        e(np.array([[1.0, 2.0]]))
    with pytest.raises(RuntimeError, match="Embedding.backward called before forward"):
        Embedding(5, 2).backward(np.zeros((1, 1, 2), np.float32))
    e(np.array([[1, 2]]))
    with pytest.raises(TypeError, match="dout"):
        e.backward(np.zeros((1, 2, 2), np.float64))
    with pytest.raises(ValueError, match="padding_idx"):
        Embedding(5, 2, padding_idx=5)
    with pytest.raises(ValueError, match="embedding_dim"):
        Embedding(5, 0)
