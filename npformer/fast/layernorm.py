"""npformer.layers.layernorm's forward and backward on row ranges over threads, fewer temporaries.

Forward and the dx part of backward work row by row (each row's mean and variance are reductions
along that row), so they run on row ranges. The parameter gradients dgamma and dbeta are sums down
the columns (over every row); they run on column ranges instead, each column summed over all the
rows in the plain order. Every element gets the plain code's operations in the same order: the same
bits on any number of threads (tests/npformer/fast/test_fast_elementwise.py). On one thread the
plain functions run: a LayerNorm's arrays fit the cache whole, and this version measured no faster
there (docs/PERFORMANCE.md).
"""
from __future__ import annotations

import numpy as np

from npformer.fast.rows import run_rows
from npformer.layers.layernorm import LayerNormCache
from npformer.layers.layernorm import layernorm_backward as plain_backward
from npformer.layers.layernorm import layernorm_forward as plain_forward

__all__ = ["MIN_COLUMNS", "layernorm_forward", "layernorm_backward"]

# Columns per range of the dgamma / dbeta sums: wide enough for whole cache lines of every row.
MIN_COLUMNS = 64


def layernorm_forward(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float = 1e-5,
                      threads: int = 1):
    """layernorm_forward(x, gamma, beta, eps)'s result and cache, rows over `threads` threads."""
    if threads == 1 or x.ndim == 0 or x.size == 0 or not x.flags.c_contiguous:
        return plain_forward(x, gamma, beta, eps)
    D = x.shape[-1]
    x2 = x.reshape(-1, D)                                   # (N, D)
    xhat = np.empty_like(x2)                                # (N, D)
    rstd = np.empty((x2.shape[0], 1), dtype=np.result_type(x2, 1.0))   # (N, 1)
    y = np.empty(x2.shape, dtype=np.result_type(x2, gamma, beta))      # (N, D)

    def job(lo, hi):
        xr, hr, yr = x2[lo:hi], xhat[lo:hi], y[lo:hi]
        mu = xr.mean(axis=-1, keepdims=True)                # (n, 1)
        np.subtract(xr, mu, out=hr)                         # xc = x - mu
        np.square(hr, out=yr)                               # y as scratch: xc^2
        var = yr.mean(axis=-1, keepdims=True)               # (n, 1) biased variance
        np.divide(1.0, np.sqrt(var + eps), out=rstd[lo:hi])
        hr *= rstd[lo:hi]                                   # xhat = xc * rstd
        np.multiply(hr, gamma, out=yr)
        yr += beta                                          # y = xhat * gamma + beta
    run_rows(job, x2.shape[0], x2.size, threads)
    lead = x.shape[:-1]
    return y.reshape(x.shape), LayerNormCache(xhat.reshape(x.shape), rstd.reshape(*lead, 1), gamma)


def layernorm_backward(dout: np.ndarray, cache: LayerNormCache, threads: int = 1):
    """layernorm_backward(dout, cache)'s (dx, dgamma, dbeta), rows (dx) and columns (the parameter
    sums) over `threads` threads."""
    xhat, rstd, gamma = cache
    if (threads == 1 or dout.shape != xhat.shape or xhat.size == 0
            or not dout.flags.c_contiguous or not xhat.flags.c_contiguous):
        return plain_backward(dout, cache)
    D = xhat.shape[-1]
    G2 = dout.reshape(-1, D)                                # (N, D)
    X2 = xhat.reshape(-1, D)                                # (N, D)
    R2 = rstd.reshape(-1, 1)                                # (N, 1)
    dbeta = np.empty(D, dtype=G2.dtype)
    dgamma = np.empty(D, dtype=np.result_type(G2, X2))

    def columns(lo, hi):                                    # the sums over rows, columns lo:hi
        g, h = G2[:, lo:hi], X2[:, lo:hi]
        dbeta[lo:hi] = g.sum(axis=0)
        dgamma[lo:hi] = np.multiply(g, h).sum(axis=0)
    run_rows(columns, D, G2.size if D >= 2 * MIN_COLUMNS else 0, threads, blocked=False)

    dx = np.empty(G2.shape, dtype=np.result_type(G2, gamma))   # (N, D)

    def rows(lo, hi):
        gr, hr, o = G2[lo:hi], X2[lo:hi], dx[lo:hi]
        np.multiply(gr, gamma, out=o)                       # g = dL/dxhat
        g_mean = o.mean(axis=-1, keepdims=True)             # (n, 1)
        tmp = np.multiply(o, hr)
        gx_mean = tmp.mean(axis=-1, keepdims=True)          # (n, 1) mean(g * xhat)
        o -= g_mean
        o -= np.multiply(hr, gx_mean, out=tmp)
        o *= R2[lo:hi]                                      # rstd (g - mean(g) - xhat mean(g xhat))
    run_rows(rows, G2.shape[0], G2.size, threads)
    return dx.reshape(xhat.shape), dgamma, dbeta
