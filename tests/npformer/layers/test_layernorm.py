"""LayerNorm: biased variance, eps inside the root, gradients of x, weight and bias."""
import numpy as np
import pytest

from npformer.checks.gradcheck import check_pair, gradcheck
from npformer.layers.layernorm import LayerNorm, layernorm_backward, layernorm_forward

TOL = 1e-6


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def reference(x, gamma, beta, eps):
    """Row by row with np.var (biased, ddof=0), independent of the vectorised code."""
    out = np.empty_like(x)
    rows, D = x.reshape(-1, x.shape[-1]), x.shape[-1]
    for r in range(rows.shape[0]):
        row = rows[r]
        out.reshape(-1, D)[r] = (row - row.mean()) / np.sqrt(np.var(row) + eps) * gamma + beta
    return out


def test_forward_matches_reference():
    x, g, b = rnd(2, 3, 6), rnd(6, seed=1), rnd(6, seed=2)
    y, _ = layernorm_forward(x, g, b, 1e-5)
    assert np.allclose(y, reference(x, g, b, 1e-5), rtol=1e-13, atol=1e-13)


def test_eps_is_inside_the_square_root():
    x = np.array([[1.0, -1.0]])                        # var = 1
    y, _ = layernorm_forward(x, np.ones(2), np.zeros(2), 0.25)
    assert np.allclose(y, x / np.sqrt(1.25), rtol=1e-15)


def test_large_offset_rows_are_stable():
    # std 1e-2 on top of 1e6: a one-pass E[x^2] - E[x]^2 variance would lose every digit here
    x = 1e6 + rnd(2, 8) * 1e-2
    y, _ = layernorm_forward(x, np.ones(8), np.zeros(8), 1e-9)
    exact = reference(x - 1e6, np.ones(8), np.zeros(8), 1e-9)   # x - 1e6 is exact (Sterbenz)
    # the mean of x carries ~ulp(1e6) = 1e-10 of rounding, 1e-8 of the 1e-2 spread: bound 1e-7
    assert np.allclose(y, exact, rtol=0, atol=1e-7)


@pytest.mark.parametrize("shape", [(5,), (3, 5), (2, 3, 5)])
def test_pair_gradients(shape):
    rep = check_pair(layernorm_forward, layernorm_backward,
                     (rnd(*shape), rnd(5, seed=1), rnd(5, seed=2), 1e-5))
    assert set(rep.errors) == {"input:x", "input:gamma", "input:beta"}
    assert rep.passed and rep.max_error < TOL, str(rep)


def test_module_gradcheck_with_non_trivial_gains():
    m = LayerNorm(6, eps=1e-5, dtype="float64")
    m.weight.data[...] = rnd(6, seed=3)                # gains away from 1, so a backward that
    m.bias.data[...] = rnd(6, seed=4)                  # forgot them would fail
    rep = gradcheck(m, rnd(2, 4, 6))
    assert set(rep.errors) == {"input:x", "weight", "bias"}
    assert rep.passed and rep.max_error < TOL, str(rep)


def test_names_init_and_float32():
    m = LayerNorm(4)
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias"]
    assert np.all(m.weight.data == 1) and np.all(m.bias.data == 0) and m.eps == 1e-5
    y = m(rnd(2, 4).astype(np.float32))
    assert y.dtype == np.float32
    assert m.backward(np.ones((2, 4), np.float32)).dtype == np.float32
    assert m.weight.grad.dtype == np.float32


def test_bad_input():
    m = LayerNorm(4)
    with pytest.raises(ValueError, match="x: expected last dimension 4"):
        m(np.zeros((2, 5), np.float32))
    with pytest.raises(TypeError, match="x: expected dtype float32"):
        m(np.zeros((2, 4)))
    with pytest.raises(ValueError, match="x: expected finite"):
        m(np.full((2, 4), np.inf, np.float32))
    with pytest.raises(RuntimeError, match="LayerNorm.backward called before forward"):
        LayerNorm(4).backward(np.zeros((1, 4), np.float32))
    m(np.zeros((2, 4), np.float32))
    with pytest.raises(ValueError, match="dout"):
        m.backward(np.zeros((4,), np.float32))
    with pytest.raises(ValueError, match="eps"):
        LayerNorm(4, eps=0.0)
    with pytest.raises(ValueError, match="d_model"):
        LayerNorm(0)
