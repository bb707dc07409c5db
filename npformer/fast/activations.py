"""npformer.layers.activations' forward and backward functions on row ranges over threads, with the
temporaries of each formula made once per cache-sized block and updated in place (ReLU, two passes
with nothing to fuse, is split over threads only, and is the plain function on one thread).

Every function takes the plain one's arguments plus `threads`, returns the plain one's result and
cache type, and gives the same bits: each element gets the plain formula's operations in the same
order (a product of two floats is the same either way round, so `c * x` may be written `x * c`);
only where the intermediate values live changes (tests/npformer/fast/test_fast_elementwise.py).
"""
from __future__ import annotations

import math

import numpy as np

from npformer.fast.rows import run_rows, split_parts
from npformer.layers.activations import GeluCache, GeluTanhCache, ReluCache
from npformer.layers.special import erfc

__all__ = ["relu_forward", "relu_backward", "gelu_forward", "gelu_backward", "gelu_tanh_forward",
           "gelu_tanh_backward", "FAST_PAIRS"]

# the plain module's constants, the same Python floats
_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_GELU_TANH_C = 0.044715
_GELU_TANH_3C = 3.0 * _GELU_TANH_C                     # Python evaluates 3.0 * C * x as (3.0 * C) * x


def _rows(x: np.ndarray) -> np.ndarray:
    """x as (N, last) rows: a view of a C-contiguous array (0-d and 1-d arrays: one row)."""
    return x.reshape(-1, x.shape[-1]) if x.ndim >= 1 and x.size else x.reshape(1, -1)


def _elementwise(fn, threads: int, *arrays: np.ndarray, blocked: bool = True) -> None:
    """fn(*(a[lo:hi] for a in arrays as rows)) over row ranges (in cache blocks when `blocked`);
    arrays share one shape."""
    rows = [_rows(a) for a in arrays]
    run_rows(lambda lo, hi: fn(*(r[lo:hi] for r in rows)), rows[0].shape[0], arrays[0].size,
             threads, blocked=blocked)


def _contiguous(*arrays) -> bool:
    return all(isinstance(a, np.ndarray) and a.flags.c_contiguous for a in arrays)


# --------------------------------------------------------------------------------------------------
# ReLU: y = x * (x > 0)
# --------------------------------------------------------------------------------------------------
def _one_piece(x: np.ndarray, threads: int) -> bool:
    """Whether run_rows would run an unblocked pass over x in one piece (then the plain call is
    the same work without the wrapping)."""
    return threads == 1 or split_parts(_rows(x).shape[0], x.size, threads) <= 1


def relu_forward(x: np.ndarray, threads: int = 1):
    if _one_piece(x, threads):                              # two passes: nothing to fuse
        from npformer.layers.activations import relu_forward as plain
        return plain(x)
    positive = np.empty(x.shape, dtype=bool)
    y = np.empty_like(x)

    def job(xr, pr, yr):
        np.greater(xr, 0, out=pr)
        np.multiply(xr, pr, out=yr)
    _elementwise(job, threads, np.ascontiguousarray(x), positive, y, blocked=False)
    return y, ReluCache(positive)


def relu_backward(dout: np.ndarray, cache: ReluCache, threads: int = 1) -> np.ndarray:
    if _one_piece(dout, threads) or dout.shape != cache.positive.shape or not _contiguous(dout):
        return dout * cache.positive
    dx = np.empty_like(dout)
    _elementwise(lambda g, p, o: np.multiply(g, p, out=o), threads, dout, cache.positive, dx,
                 blocked=False)
    return dx


# --------------------------------------------------------------------------------------------------
# exact GELU: y = x Phi(x), Phi(x) = erfc(-x / sqrt 2) / 2
# --------------------------------------------------------------------------------------------------
def gelu_forward(x: np.ndarray, threads: int = 1):
    x = np.ascontiguousarray(x)
    cdf = np.empty_like(x)
    y = np.empty_like(x)

    def job(xr, cr, yr):
        np.multiply(0.5, erfc(-xr * _INV_SQRT2), out=cr)        # Phi(x)
        np.multiply(xr, cr, out=yr)                             # x Phi(x)
    _elementwise(job, threads, x, cdf, y)
    return y, GeluCache(x, cdf)


def gelu_backward(dout: np.ndarray, cache: GeluCache, threads: int = 1) -> np.ndarray:
    x, cdf = cache
    if dout.shape != x.shape or not _contiguous(dout, x, cdf):
        from npformer.layers.activations import gelu_backward as plain
        return plain(dout, cache)
    dx = np.empty(x.shape, dtype=np.result_type(dout, x))

    def job(gr, xr, cr, o):
        pdf = -0.5 * xr                                         # phi(x) = exp(-x x / 2) / sqrt(2 pi)
        pdf *= xr
        np.exp(pdf, out=pdf)
        pdf *= _INV_SQRT_2PI
        pdf *= xr                                               # x phi(x)
        np.add(cr, pdf, out=pdf)                                # Phi(x) + x phi(x)
        np.multiply(gr, pdf, out=o)
    _elementwise(job, threads, dout, x, cdf, dx)
    return dx


# --------------------------------------------------------------------------------------------------
# GELU, tanh approximation: y = x (1 + t) / 2, t = tanh(sqrt(2/pi) (x + 0.044715 x^3))
# --------------------------------------------------------------------------------------------------
def gelu_tanh_forward(x: np.ndarray, threads: int = 1):
    x = np.ascontiguousarray(x)
    t = np.empty_like(x)
    y = np.empty_like(x)

    def job(xr, tr, yr):
        np.multiply(xr, _GELU_TANH_C, out=tr)                   # C x
        tr *= xr
        tr *= xr                                                # C x x x
        np.add(xr, tr, out=tr)                                  # x + C x^3
        tr *= _SQRT_2_OVER_PI                                   # u
        np.tanh(tr, out=tr)                                     # t = tanh(u)
        one_t = np.add(1.0, tr)                                 # 1 + t (range-sized scratch)
        np.multiply(0.5, xr, out=yr)
        yr *= one_t                                             # (0.5 x)(1 + t)
    _elementwise(job, threads, x, t, y)
    return y, GeluTanhCache(x, t)


def gelu_tanh_backward(dout: np.ndarray, cache: GeluTanhCache, threads: int = 1) -> np.ndarray:
    x, t = cache
    if dout.shape != x.shape or not _contiguous(dout, x, t):
        from npformer.layers.activations import gelu_tanh_backward as plain
        return plain(dout, cache)
    dx = np.empty(x.shape, dtype=np.result_type(dout, x))

    def job(gr, xr, tr, o):
        du = np.multiply(_GELU_TANH_3C, xr)                     # (3C) x
        du *= xr
        np.add(1.0, du, out=du)                                 # 1 + 3C x^2
        du *= _SQRT_2_OVER_PI                                   # u'(x)
        a = np.add(1.0, tr)
        a *= 0.5                                                # 0.5 (1 + t)
        b = np.multiply(tr, tr)
        np.subtract(1.0, b, out=b)                              # 1 - t^2
        c = np.multiply(0.5, xr)
        c *= b
        c *= du                                                 # 0.5 x (1 - t^2) u'
        a += c
        np.multiply(gr, a, out=o)                               # dout * (...)
    _elementwise(job, threads, dout, x, t, dx)
    return dx


FAST_PAIRS = {
    "relu": (relu_forward, relu_backward),
    "gelu": (gelu_forward, gelu_backward),
    "gelu_tanh": (gelu_tanh_forward, gelu_tanh_backward),
}
