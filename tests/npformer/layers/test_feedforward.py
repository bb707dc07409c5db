"""PositionwiseFeedForward: finite differences for each activation (with and without dropout), an
independent reference, dtypes and bad input."""
import math

import numpy as np
import pytest

from npformer.checks.gradcheck import gradcheck
from npformer.layers.feedforward import PositionwiseFeedForward

TOL = 1e-6


def ffn64(activation, dropout=0.0, bias=True, seed=0):
    m = PositionwiseFeedForward(8, 16, activation, dropout=dropout, bias=bias, dtype="float64",
                                rng=np.random.default_rng(seed))
    for _, p in m.named_parameters():        # non-zero biases
        if p.data.ndim == 1:
            p.data[...] = np.random.default_rng(seed + 3).standard_normal(p.data.shape) * 0.1
    return m


def reference_act(name, h):
    if name == "relu":
        return np.maximum(h, 0.0)
    if name == "gelu":
        return np.vectorize(lambda z: 0.5 * z * (1.0 + math.erf(z / math.sqrt(2.0))))(h)
    c = math.sqrt(2.0 / math.pi)
    return 0.5 * h * (1.0 + np.tanh(c * (h + 0.044715 * h ** 3)))


def away_from_relu_kink(m, x, margin=1e-3):
    """Keep the check off ReLU's kink (finite differences are meaningless within eps of 0)."""
    h = x @ m.linear1.weight.data.T + m.linear1.bias.data
    return np.abs(h).min() > margin


@pytest.mark.parametrize("activation", ["relu", "gelu", "gelu_tanh"])
def test_ffn_matches_reference_and_gradcheck(activation):
    rng = np.random.default_rng(1)
    m = ffn64(activation)
    x = rng.standard_normal((2, 3, 8))
    if activation == "relu":
        assert away_from_relu_kink(m, x)
    out = m(x)
    h = x @ m.linear1.weight.data.T + m.linear1.bias.data
    ref = reference_act(activation, h) @ m.linear2.weight.data.T + m.linear2.bias.data
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-13)
    gradcheck(m, x, tol=TOL).raise_if_failed()


@pytest.mark.parametrize("activation", ["relu", "gelu", "gelu_tanh"])
def test_ffn_activation_dropout_active_gradcheck(activation):
    rng = np.random.default_rng(2)
    m = ffn64(activation, dropout=0.25, bias=False)
    m.train()
    x = rng.standard_normal((2, 4, 8))
    gradcheck(m, x, tol=TOL).raise_if_failed()
    mask = m.dropout.last_mask
    assert mask is not None and mask.shape == (2, 4, 16) and not mask.all()


def test_ffn_names_float32_and_errors():
    m = PositionwiseFeedForward(8, 16, "gelu", dropout=0.1, dtype="float32",
                                rng=np.random.default_rng(0))
    assert [n for n, _ in m.named_parameters()] == ["linear1.weight", "linear1.bias",
                                                    "linear2.weight", "linear2.bias"]
    x = np.random.default_rng(3).standard_normal((2, 3, 8)).astype(np.float32)
    with pytest.raises(RuntimeError, match="backward called before forward"):
        m.backward(x)
    out = m(x)
    assert out.dtype == np.float32
    with pytest.raises(ValueError, match="dout"):
        m.backward(np.ones((2, 3, 7), np.float32))
    assert m.backward(np.ones_like(out)).dtype == np.float32
    assert all(p.grad.dtype == np.float32 for p in m.parameters())
    with pytest.raises(TypeError, match="x:.*float32"):
        m(x.astype(np.float64))
    with pytest.raises(ValueError, match="x:"):
        m(x[..., :4])
    with pytest.raises(ValueError, match="x:"):
        m(x[0])
    with pytest.raises(ValueError, match="activation|name"):
        PositionwiseFeedForward(8, 16, "swish")
