"""Extreme but legal inputs through the numerically sensitive layers of both twins, against a
float64 reference written here: softmax / log-softmax with -inf rows and gaps of thousands,
cross-entropy on logits in the thousands (with label smoothing), LayerNorm on huge, tiny and
offset inputs, attention with scores in the thousands and fully masked rows; float32 kept float32."""
import numpy as np
import pytest
import torch

from npformer.layers.attention import sdpa_backward, sdpa_forward
from npformer.layers.layernorm import layernorm_backward, layernorm_forward
from npformer.layers.loss import cross_entropy_forward
from npformer.layers.softmax import log_softmax_forward, softmax_forward
from torchformer.layers.attention import sdpa_explicit

INF = np.inf


def test_softmax_rows_of_minus_inf_and_huge_gaps():
    x = np.array([[-INF, -INF, -INF], [-INF, 3.0, -INF], [1e300, -1e300, 0.0], [1000.0, 999.0, 0.0]])
    y, _ = softmax_forward(x)
    e = 1.0 / (1.0 + np.exp(-1.0) + np.exp(-1000.0))
    np.testing.assert_array_equal(y[:3], [[0, 0, 0], [0, 1, 0], [1, 0, 0]])
    np.testing.assert_allclose(y[3], [e, e * np.exp(-1.0), 0.0], rtol=1e-15, atol=1e-300)
    ly, _ = log_softmax_forward(x)
    assert np.isneginf(ly[0]).all() and ly[1].tolist() == [-INF, 0.0, -INF]
    assert ly[3, 2] == pytest.approx(-1000.0 - np.log1p(np.exp(-1.0)), rel=1e-15)


def test_softmax_float32_at_the_top_of_its_range_stays_float32():
    x = np.array([[3.4e38, 3.4e38, -3.4e38]], dtype=np.float32)
    with np.errstate(over="raise", invalid="raise"):
        y, _ = softmax_forward(x)
    assert y.dtype == np.float32 and y.tolist() == [[0.5, 0.5, 0.0]]


@pytest.mark.parametrize("smoothing, want", [(0.0, 1000.0), (0.1, 0.9 * 1000.0 + 0.1 * 500.0)])
def test_cross_entropy_on_logits_in_the_thousands(smoothing, want):
    """logits (1000, 0), target 1: -log p = 1000 + log(1 + e^-1000) = 1000; smoothing adds
    eps * (-mean log p) = eps * (0 + 1000) / 2 (with the (1 - eps) nll)."""
    logits = np.array([[1000.0, 0.0]])
    loss, _ = cross_entropy_forward(logits, np.array([1]), label_smoothing=smoothing)
    assert float(loss) == pytest.approx(want, rel=1e-15)
    t = torch.nn.functional.cross_entropy(torch.tensor(logits), torch.tensor([1]),
                                          label_smoothing=smoothing)
    assert float(t) == pytest.approx(want, rel=1e-15)


def _ln_ref(x):
    x = x.astype(np.float64)
    xc = x - x.mean(-1, keepdims=True)
    return xc / np.sqrt((xc ** 2).mean(-1, keepdims=True) + 1e-5)


@pytest.mark.parametrize("dtype, scale, offset, rtol", [
    ("float64", 1e150, 0.0, 1e-12), ("float64", 1e-150, 0.0, 1e-12), ("float64", 1.0, 1e8, 1e-6),
    ("float32", 1e15, 0.0, 1e-5), ("float32", 1e-15, 0.0, 1e-5), ("float32", 1.0, 1e4, 2e-3)])
def test_layernorm_on_huge_tiny_and_offset_inputs_in_both_twins(dtype, scale, offset, rtol):
    """An offset of 1e4 over unit noise in float32 (1e8 in float64) is where a one-pass variance
    E[x^2] - E[x]^2 cancels to garbage; the two-pass one keeps ~3 digits (float32)."""
    rng = np.random.default_rng(0)
    x = (offset + scale * rng.standard_normal((3, 16))).astype(dtype)
    g, b = np.ones(16, dtype), np.zeros(16, dtype)
    ref = _ln_ref(x)
    y, cache = layernorm_forward(x, g, b, eps=1e-5)
    t = torch.nn.functional.layer_norm(torch.tensor(x), (16,), eps=1e-5).numpy()
    assert y.dtype == np.dtype(dtype)
    for got in (y, t):
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=rtol * np.abs(ref).max())
    dx = layernorm_backward(np.ones_like(x), cache)[0]          # d(sum y)/dx = 0 (mean removed)
    assert np.isfinite(dx).all()


def test_attention_with_scores_in_the_thousands_and_fully_masked_rows_in_both_twins():
    rng = np.random.default_rng(1)
    q = rng.standard_normal((1, 2, 3, 4)) * 60.0                  # scores ~ 60*60*4/2: thousands
    k = rng.standard_normal((1, 2, 5, 4)) * 60.0
    v = rng.standard_normal((1, 2, 5, 4))
    keep = np.ones((1, 1, 3, 5), dtype=bool)
    keep[0, 0, 1] = False                                         # query row 1: no key at all
    keep[0, 0, 2, 3:] = False
    s = q @ k.swapaxes(-1, -2) / 2.0                              # reference softmax, float64
    s = np.where(keep, s, -INF)
    m = np.where(np.isfinite(s.max(-1, keepdims=True)), s.max(-1, keepdims=True), 0)
    e = np.exp(s - m)
    ref = e / np.where(e.sum(-1, keepdims=True) > 0, e.sum(-1, keepdims=True), 1)
    assert np.abs(s[np.isfinite(s)]).max() > 500
    (out, w), cache = sdpa_forward(q, k, v, keep)
    t_out, t_w = sdpa_explicit(torch.tensor(q), torch.tensor(k), torch.tensor(v),
                               torch.tensor(keep))
    np.testing.assert_allclose(t_w.numpy(), ref, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(w, ref, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(out, ref @ v, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(t_out.numpy(), ref @ v, rtol=1e-12, atol=1e-15)
    assert (out[0, :, 1] == 0).all() and np.isfinite(out).all()
    dq, dk, dv = sdpa_backward(rng.standard_normal(out.shape), cache)[:3]
    assert np.isfinite(dq).all() and np.isfinite(dk).all() and (dq[0, :, 1] == 0).all()
