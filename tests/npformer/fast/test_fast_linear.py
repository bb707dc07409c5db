"""npformer.fast.linear (a few rows as (W @ x^T)^T) against the plain linear_forward."""
from __future__ import annotations

import numpy as np
import pytest

import npformer as nf
from npformer.fast.linear import FEW_ROWS, few_rows_linear_forward, use_few_rows_linear
from npformer.layers.linear import linear_backward, linear_forward


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("lead", [(1,), (3,), (2, 1, 3), (FEW_ROWS,), (FEW_ROWS + 1,), (5, 7)])
@pytest.mark.parametrize("bias", [True, False])
def test_few_rows_forward_equals_the_plain_forward_to_rounding(dtype, lead, bias):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(lead + (37,)).astype(dtype)
    W = rng.standard_normal((29, 37)).astype(dtype)
    b = rng.standard_normal(29).astype(dtype) if bias else None
    want, want_cache = linear_forward(x, W, b)
    got, cache = few_rows_linear_forward(x, W, b)
    assert got.shape == want.shape and got.dtype == want.dtype
    # the reordered-sum bound: I * eps * sum_i |x_i w_i| (+ the bias, added the same way in both)
    bound = 37 * np.finfo(dtype).eps * (np.abs(x) @ np.abs(W).T)
    assert np.all(np.abs(got - want) <= bound)
    if int(np.prod(lead)) > FEW_ROWS:
        np.testing.assert_array_equal(got, want)            # many rows: the plain product itself
    dout = rng.standard_normal(want.shape).astype(dtype)
    for a, c in zip(linear_backward(dout, cache), linear_backward(dout, want_cache)):
        if a is None:
            assert c is None
        else:
            np.testing.assert_array_equal(a, c)             # backward is the plain one


def test_use_few_rows_linear_switches_every_linear_of_a_model():
    cfg = nf.TransformerConfig(d_model=8, num_heads=2, d_ff=16, num_encoder_layers=1,
                               num_decoder_layers=1, vocab_size=11, max_len=9, dtype="float64")
    model = nf.Transformer(cfg, seed=0).eval()
    src = np.random.default_rng(1).integers(3, 11, size=(2, 5))
    tgt = np.random.default_rng(2).integers(3, 11, size=(2, 4))
    want = model(src, tgt)
    fast = use_few_rows_linear(model)
    linears = [m for _, m in fast.named_modules() if isinstance(m, nf.Linear)]
    assert linears and all(m.functional is few_rows_linear_forward for m in linears)
    np.testing.assert_allclose(fast(src, tgt), want, rtol=1e-12, atol=1e-12)


def test_use_few_rows_linear_off_gives_the_plain_product_back():
    cfg = nf.TransformerConfig(d_model=8, num_heads=2, d_ff=16, num_encoder_layers=1,
                               num_decoder_layers=1, vocab_size=11, max_len=9, dtype="float64")
    model = use_few_rows_linear(nf.Transformer(cfg, seed=0))
    plain = use_few_rows_linear(model, on=False)
    linears = [m for _, m in plain.named_modules() if isinstance(m, nf.Linear)]
    assert linears and all(m.functional is nf.Linear.functional for m in linears)
    assert all("functional" not in m.__dict__ for m in linears)     # the class's own, not a copy
