"""A faster product for a Linear layer fed a few rows at a time (incremental decoding).

With few rows (one new token per sequence: N = batch), OpenBLAS computes x @ W^T much more slowly
than the same product written (W @ x^T)^T (docs/benchmarks/ has the measurement), and from about a
hundred rows on, x @ W^T is as fast or faster. `few_rows_linear_forward` picks the faster form by
the number of rows; `use_few_rows_linear(model)` makes every Linear of a model use it.

The two forms compute the same dot products, but BLAS may sum each one in a different order, so
the results agree to rounding, not bit for bit: |difference| <= I * eps * sum_i |x_i w_i| per
output (I the inner size, eps the dtype's machine epsilon), the bound any reordered sum obeys
(tests/npformer/fast/test_fast_linear.py checks it).
"""
from __future__ import annotations

import numpy as np

from npformer.layers.linear import Linear, LinearCache, linear_forward

__all__ = ["FEW_ROWS", "few_rows_linear_forward", "use_few_rows_linear"]

FEW_ROWS = 32                                 # at most this many rows: (W @ x^T)^T


def few_rows_linear_forward(x: np.ndarray, W: np.ndarray, b: np.ndarray | None):
    """linear_forward's signature and result: y = x @ W.T + b, (W @ x^T)^T when x has few rows."""
    O, I = W.shape
    x2 = x.reshape(-1, I)                         # (N, I)
    if x2.shape[0] > FEW_ROWS:
        return linear_forward(x, W, b)
    y = np.ascontiguousarray((W @ x2.T).T)        # (O, I) @ (I, N) -> (O, N) -> (N, O)
    if b is not None:
        y += b                                    # (N, O) + (O,)
    return y.reshape(*x.shape[:-1], O), LinearCache(x, W, b is not None)   # (..., O)


def use_few_rows_linear(model, on: bool = True):
    """Make every Linear in `model` run few_rows_linear_forward (on=False: the plain
    linear_forward again, the class's own); returns the model."""
    for _, m in model.named_modules():
        if isinstance(m, Linear):
            if on:
                m.functional = few_rows_linear_forward
            else:
                m.__dict__.pop("functional", None)
    return model
