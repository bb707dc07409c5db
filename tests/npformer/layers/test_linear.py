"""Linear: torch layout, any leading dims, finite differences, dtypes, bad input."""
import math

import numpy as np
import pytest

from npformer.checks.gradcheck import check_pair, gradcheck
from npformer.layers.linear import Linear, linear_backward, linear_forward

TOL = 1e-6


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def jittered(layer, seed=1):
    """Non-zero bias, so a backward that ignored it would show."""
    if layer.bias is not None:
        layer.bias.data[...] = rnd(*layer.bias.shape, seed=seed).astype(layer.dtype)
    return layer


@pytest.mark.parametrize("lead", [(), (3,), (2, 3), (2, 1, 3), (5, 7), (40,)])
def test_forward_matches_reference(lead):
    """Both branches of linear_forward: few rows (W @ x^T) and many (x @ W^T), FEW_ROWS = 32."""
    x, W, b = rnd(*lead, 4), rnd(5, 4, seed=1), rnd(5, seed=2)
    y, _ = linear_forward(x, W, b)
    ref = np.einsum("...i,oi->...o", x, W) + b
    assert y.shape == lead + (5,)
    assert np.allclose(y, ref, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("lead", [(3,), (2, 3), (2, 1, 3), (3, 12)])
def test_pair_gradients(lead):
    rep = check_pair(linear_forward, linear_backward, (rnd(*lead, 4), rnd(5, 4, seed=1),
                                                       rnd(5, seed=2)))
    assert rep.passed and rep.max_error < TOL, str(rep)


def test_pair_without_bias_returns_none():
    x, W = rnd(2, 4), rnd(3, 4, seed=1)
    y, cache = linear_forward(x, W, None)
    dx, dW, db = linear_backward(rnd(2, 3, seed=2), cache)
    assert db is None
    assert check_pair(linear_forward, linear_backward, (x, W, None)).passed


@pytest.mark.parametrize("bias", [True, False])
def test_module_gradcheck(bias):
    m = jittered(Linear(4, 3, bias=bias, dtype="float64", rng=np.random.default_rng(0)))
    rep = gradcheck(m, rnd(2, 5, 4))
    assert set(rep.errors) == ({"input:x", "weight", "bias"} if bias else {"input:x", "weight"})
    assert rep.passed and rep.max_error < TOL, str(rep)


def test_parameter_names_layout_and_init():
    m = Linear(7, 3, rng=np.random.default_rng(4))
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias"]
    assert m.weight.shape == (3, 7) and m.bias.shape == (3,)
    bound = math.sqrt(6.0 / (7 + 3))                  # Xavier-uniform
    assert np.all(np.abs(m.weight.data) <= bound) and np.all(m.bias.data == 0)
    assert np.abs(m.weight.data).max() > 0.5 * bound   # really spread over the interval
    assert list(Linear(7, 3, bias=False).state_dict()) == ["weight"]


def test_seeded_init_is_bit_identical():
    a = Linear(5, 4, dtype="float64", rng=np.random.default_rng(3))
    b = Linear(5, 4, dtype="float64", rng=np.random.default_rng(3))
    assert np.array_equal(a.weight.data, b.weight.data)
    c = Linear(5, 4, dtype="float32", rng=np.random.default_rng(3))
    assert np.array_equal(c.weight.data, a.weight.data.astype(np.float32))


def test_float32_stays_float32():
    m = jittered(Linear(4, 3, rng=np.random.default_rng(0)))
    y = m(rnd(2, 4).astype(np.float32))
    assert y.dtype == np.float32
    dx = m.backward(rnd(2, 3).astype(np.float32))
    assert dx.dtype == np.float32 and m.weight.grad.dtype == np.float32


def test_gradients_accumulate():
    m = Linear(4, 3, dtype="float64")
    x, g = rnd(2, 4), rnd(2, 3, seed=1)
    m(x)
    m.backward(g)
    once = m.weight.grad.copy()
    m(x)                                    # a second backward needs a second forward (as torch)
    m.backward(g)
    assert np.allclose(m.weight.grad, 2 * once)
    assert np.allclose(once, g.T @ x)


def test_bad_input():
    m = Linear(4, 3)
    with pytest.raises(ValueError, match=r"x: expected last dimension 4"):
        m(np.zeros((2, 5), np.float32))
    with pytest.raises(TypeError, match=r"x: expected dtype float32"):
        m(np.zeros((2, 4), np.float64))
    with pytest.raises(ValueError, match=r"x: expected finite"):
        m(np.full((2, 4), np.nan, np.float32))
    with pytest.raises(TypeError, match=r"x: expected a numpy array"):
        m([[0.0] * 4])
    with pytest.raises(RuntimeError, match="Linear.backward called before forward"):
        Linear(4, 3).backward(np.zeros((2, 3), np.float32))
    m(np.zeros((2, 4), np.float32))
    with pytest.raises(ValueError, match="dout"):
        m.backward(np.zeros((3, 3), np.float32))
    with pytest.raises(ValueError, match="in_features"):
        Linear(0, 3)
    with pytest.raises(ValueError, match="dtype"):
        Linear(2, 3, dtype="int32")
