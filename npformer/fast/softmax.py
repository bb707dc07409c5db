"""npformer.layers.attention's attention weights P = softmax(Q K^T / sqrt(dk)) and their backward,
with the elementwise passes (scale, mask, max, exp, sum, divide; the softmax backward) on slices
over threads; and the log-softmax of the loss on row ranges.

The matrix products stay NumPy's (BLAS threads them). The (B, H, Tq, Tk) scores are cut along the
batch, head or query axis, whichever is longest, each slice with the matching slice of a broadcast
keep-mask; every softmax row lies whole in one slice. Each element gets the plain operations in the
same order, so the results are the plain ones bit for bit (tests/npformer/fast/test_fast_elementwise.py).
On one thread the attention functions are the plain ones (this version measured no faster there);
the log-softmax runs in cache blocks, which pays on one thread too.
"""
from __future__ import annotations

import math

import numpy as np

from npformer.fast.rows import run_rows
from npformer.layers.attention import WeightsCache
from npformer.layers.attention import attention_weights_backward as plain_weights_backward
from npformer.layers.attention import attention_weights_forward as plain_weights_forward
from npformer.layers.softmax import LogSoftmaxCache

__all__ = ["attention_weights_forward", "attention_weights_backward", "log_softmax_rows"]


def _split_axis(shape: tuple[int, ...]) -> int:
    """The longest of the axes before the last two (batch, heads) and the query axis."""
    return int(np.argmax(shape[:-1]))


def _slicer(axis: int, ndim: int):
    def cut(a: np.ndarray, lo: int, hi: int) -> np.ndarray:
        if a is None or a.shape[axis] == 1:                 # broadcast along this axis: whole
            return a
        index = [slice(None)] * ndim
        index[axis] = slice(lo, hi)
        return a[tuple(index)]
    return cut


def attention_weights_forward(q: np.ndarray, k: np.ndarray, keep: np.ndarray | None,
                              threads: int = 1):
    """npformer.layers.attention.attention_weights_forward's (weights, cache), the softmax passes
    on slices over `threads` threads."""
    if threads == 1:
        return plain_weights_forward(q, k, keep)
    scale = 1.0 / math.sqrt(q.shape[-1])
    scores = q @ k.swapaxes(-1, -2)                         # (B, H, Tq, Tk) Q K^T, new array
    if keep is not None:
        keep = keep.reshape((1,) * (4 - keep.ndim) + keep.shape)   # 4-d, for slicing
    axis = _split_axis(scores.shape)
    cut = _slicer(axis, 4)

    def job(lo, hi):
        s = cut(scores, lo, hi)
        s *= scale                                          # S = Q K^T / sqrt(dk)
        if keep is not None:
            np.copyto(s, -np.inf, where=~cut(keep, lo, hi))  # masked keys -> -inf
        row_max = s.max(axis=-1, keepdims=True)
        row_max = np.where(np.isfinite(row_max), row_max, 0)    # empty row: shift by 0
        np.subtract(s, row_max, out=s)
        np.exp(s, out=s)
        denom = s.sum(axis=-1, keepdims=True)               # 0 on empty rows
        np.divide(s, np.where(denom > 0, denom, 1), out=s)  # P; empty row 0 / 1 = 0
    run_rows(job, scores.shape[axis], scores.size, threads)
    return scores, WeightsCache(q, k, scores, scale)


def attention_weights_backward(dweights: np.ndarray, cache: WeightsCache, threads: int = 1):
    """npformer.layers.attention.attention_weights_backward's (dq, dk), the softmax backward on
    slices over `threads` threads."""
    if threads == 1:
        return plain_weights_backward(dweights, cache)
    q, k, weights, scale = cache
    dscores = np.empty(np.broadcast_shapes(dweights.shape, weights.shape),
                       dtype=np.result_type(dweights, weights))
    if dscores.shape != dweights.shape or dscores.shape != weights.shape:
        return plain_weights_backward(dweights, cache)
    axis = _split_axis(dscores.shape)
    cut = _slicer(axis, 4)

    def job(lo, hi):
        d, w, o = cut(dweights, lo, hi), cut(weights, lo, hi), cut(dscores, lo, hi)
        np.multiply(d, w, out=o)                            # dP * P
        row_dot = o.sum(axis=-1, keepdims=True)             # rowsum(dP * P)
        np.subtract(d, row_dot, out=o)
        o *= w                                              # dS = P (dP - rowsum(dP * P))
    run_rows(job, dscores.shape[axis], dscores.size, threads)
    dq = dscores @ k
    dq *= scale                                             # dS K / sqrt(dk)
    dk = dscores.swapaxes(-1, -2) @ q
    dk *= scale                                             # dS^T Q / sqrt(dk)
    return dq, dk


def log_softmax_rows(x: np.ndarray, threads: int = 1):
    """npformer.layers.softmax.log_softmax_forward(x, axis=-1) for a 2-d x (N, C): the same
    (y, cache), rows over `threads` threads, with one range-sized scratch array for exp."""
    N, C = x.shape
    y = np.empty_like(x)

    def job(lo, hi):
        xr, yr = x[lo:hi], y[lo:hi]
        m = np.max(xr, axis=-1, keepdims=True)
        m = np.where(np.isneginf(m), np.zeros_like(m), m)   # all -inf row: shift by 0
        with np.errstate(over="ignore"):
            np.subtract(xr, m, out=yr)                      # z = x - max
        s = np.exp(yr).sum(axis=-1, keepdims=True)          # >= 1, or 0 on empty rows
        with np.errstate(divide="ignore"):
            lse = np.log(s)
        yr -= np.where(np.isneginf(lse), np.zeros_like(lse), lse)  # empty rows stay -inf
    run_rows(job, N, x.size, threads, blocked=True)
    return y, LogSoftmaxCache(y, -1)
