"""Activations and the erf they rest on: values against math.erf, derivatives by finite differences."""
import math

import numpy as np
import pytest

from npformer.checks.gradcheck import check_pair, gradcheck
from npformer.layers.activations import (
    ACTIVATION_PAIRS,
    Activation,
    gelu_backward,
    gelu_forward,
    gelu_tanh_forward,
    relu_forward,
)
from npformer.layers.special import erf, erfc

TOL = 1e-6


def away_from_zero(x, gap=1e-3):
    """Move entries off ReLU's kink, where a finite difference straddles it."""
    return np.where(np.abs(x) < gap, np.sign(x + 1e-300) * gap * 2, x)


def erf_points():
    """Dense grid over every region boundary and the tails, plus random points."""
    grid = np.linspace(-9.0, 9.0, 36001)
    edges = np.array([0.0, 1e-300, -1e-300, 1e-12, 0.46875, 0.46876, 4.0, 4.00001, 26.0, 27.5])
    rand = np.random.default_rng(0).standard_normal(20000) * 3
    x = np.concatenate([grid, edges, -edges, rand])
    return x


def test_erf_matches_math_erf_to_a_few_ulp():
    x = erf_points()
    got = erf(x)
    ref = np.array([math.erf(v) for v in x])
    ulp = np.spacing(np.abs(ref)) + np.finfo(np.float64).tiny
    assert np.max(np.abs(got - ref) / ulp) <= 4


def test_erfc_matches_math_erfc_in_the_tails():
    x = erf_points()
    got = erfc(x)
    ref = np.array([math.erfc(v) for v in x])
    normal = ref > np.finfo(np.float64).tiny            # beyond, math.erfc is subnormal
    rel = np.abs(got - ref)[normal] / ref[normal]
    assert rel.max() < 2e-15
    assert np.all(np.abs(got - ref)[~normal] < 1e-300)


def test_erf_special_values_and_dtype():
    assert np.array_equal(erf(np.array([np.inf, -np.inf, 0.0])), [1.0, -1.0, 0.0])
    assert np.array_equal(erfc(np.array([np.inf, -np.inf])), [0.0, 2.0])
    assert np.isnan(erf(np.array([np.nan]))[0]) and np.isnan(erfc(np.array([np.nan]))[0])
    x32 = np.linspace(-5, 5, 1001, dtype=np.float32)
    assert erf(x32).dtype == np.float32
    ref = np.array([math.erf(v) for v in x32.astype(np.float64)])
    assert np.max(np.abs(erf(x32) - ref)) < 3e-7


def test_values_against_scalar_formulas():
    x = np.random.default_rng(1).standard_normal(200) * 3
    relu, _ = relu_forward(x)
    gelu, _ = gelu_forward(x)
    tanh_, _ = gelu_tanh_forward(x)
    for i, v in enumerate(x):
        assert relu[i] == max(v, 0.0)
        # Phi(v) = erfc(-v / sqrt 2) / 2: the form without cancellation for negative v
        assert gelu[i] == pytest.approx(v * 0.5 * math.erfc(-v / math.sqrt(2)), rel=1e-14,
                                        abs=1e-300)
        u = math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)
        # 1 + tanh(u) cancels for negative v in every implementation (torch's too): the rounding
        # error is then a few ulp of |v|, not of the small result
        assert tanh_[i] == pytest.approx(0.5 * v * (1 + math.tanh(u)), rel=1e-14,
                                         abs=1e-15 * abs(v))


def test_gelu_far_negative_has_no_cancellation():
    x = np.array([-10.0, -20.0])
    y, cache = gelu_forward(x)
    ref = [v * 0.5 * math.erfc(-v / math.sqrt(2)) for v in x]
    assert np.allclose(y, ref, rtol=1e-13, atol=0) and np.all(y < 0)
    assert np.all(np.isfinite(gelu_backward(np.ones(2), cache)))


@pytest.mark.parametrize("name", sorted(ACTIVATION_PAIRS))
def test_pair_gradients(name):
    fwd, bwd = ACTIVATION_PAIRS[name]
    x = away_from_zero(np.random.default_rng(2).standard_normal((3, 4, 5)) * 2)
    rep = check_pair(fwd, bwd, (x,))
    assert rep.passed and rep.max_error < TOL, str(rep)


@pytest.mark.parametrize("name", sorted(ACTIVATION_PAIRS))
def test_module_gradcheck_and_float32(name):
    m = Activation(name)
    x = away_from_zero(np.random.default_rng(3).standard_normal((2, 7)) * 2)
    rep = gradcheck(m, x)
    assert rep.passed and rep.max_error < TOL, str(rep)
    y = m(x.astype(np.float32))
    assert y.dtype == np.float32
    assert m.backward(np.ones_like(y)).dtype == np.float32


def test_relu_gradient_at_zero_is_zero():
    _, cache = relu_forward(np.array([0.0, -0.0, 1.0]))
    assert np.array_equal(ACTIVATION_PAIRS["relu"][1](np.ones(3), cache), [0.0, 0.0, 1.0])


def test_bad_input():
    with pytest.raises(ValueError, match=r"Activation: name: expected one of \('relu', 'gelu', "
                                         r"'gelu_tanh'\), got 'swish'"):
        Activation("swish")
    m = Activation("gelu")
    with pytest.raises(ValueError, match="x: expected finite"):
        m(np.array([np.nan]))
    with pytest.raises(TypeError, match="x: expected dtype float32 or float64"):
        m(np.array([1, 2]))
    with pytest.raises(RuntimeError, match="Activation.backward called before forward"):
        Activation("relu").backward(np.zeros(2))
    m(np.zeros(3))
    with pytest.raises(ValueError, match="dout"):
        m.backward(np.zeros(4))
