"""npformer.layers.attention's attention weights P = softmax(Q K^T / sqrt(dk)) and their backward,
with the elementwise passes (scale, mask, max, exp, sum, divide; the softmax backward) on slices
over threads; and the log-softmax of the loss on row ranges.

The matrix products stay NumPy's (BLAS threads them). The (B, H, Tq, Tk) scores are cut along the
batch, head or query axis, whichever is longest, each slice with the matching slice of a broadcast
keep-mask; every softmax row lies whole in one slice. Each element gets the plain operations in the
same order, so the results are the plain ones bit for bit (tests/npformer/fast/test_fast_elementwise.py).
A pass that stays in one piece (one thread, or too few elements to split) runs the plain
operations (skipping the masking when the keep-mask is all True: a copy that changes nothing),
except the row max of short rows (row_max): a reduction along a last axis of a few dozen
elements pays NumPy's per-row cost once per row, so rows of at most SHORT_ROW keys are transposed into
one contiguous (keys, rows) array and reduced down its columns. A maximum does not depend on the
order it is taken in, so this is the plain max bit for bit. The log-softmax runs in cache blocks,
which pays on one thread too.
"""
from __future__ import annotations

import math

import numpy as np

from npformer.fast.rows import run_rows, split_parts
from npformer.layers.attention import WeightsCache
from npformer.layers.attention import attention_weights_backward as plain_weights_backward
from npformer.layers.softmax import LogSoftmaxCache

__all__ = ["SHORT_ROW", "MIN_SHORT_ROWS", "row_max", "attention_weights_forward",
           "softmax_scores_backward", "attention_weights_backward", "log_softmax_rows"]

# row_max transposes rows of at most SHORT_ROW elements when there are at least MIN_SHORT_ROWS of them
# (one thread, float32, CPU time per call: (8, 4, 32, 32) scores 115 -> 37 us, (2, 12, 64, 64) 182 ->
# 147 us; rows of 128 keys 132 -> 201 us and a single query row 2.9 -> 5.2 us, so those stay plain).
SHORT_ROW = 64
MIN_SHORT_ROWS = 64


def row_max(s: np.ndarray) -> np.ndarray:
    """s.max(axis=-1, keepdims=True), the same values (NaN where a row has one); short rows reduced
    as the columns of their transposed copy."""
    T = s.shape[-1] if s.ndim else 0
    if s.ndim < 2 or T == 0 or T > SHORT_ROW or s.size < T * MIN_SHORT_ROWS:
        return s.max(axis=-1, keepdims=True)
    by_key = np.ascontiguousarray(s.reshape(-1, T).T)      # (T, rows) one copy
    return by_key.max(axis=0).reshape(*s.shape[:-1], 1)    # (..., 1)


def _weights_one_piece(q: np.ndarray, k: np.ndarray, keep: np.ndarray | None):
    """The plain attention_weights_forward's steps in its order, with row_max for the row max."""
    scale = 1.0 / math.sqrt(q.shape[-1])
    scores = q @ k.swapaxes(-1, -2)                         # (B, H, Tq, Tk) Q K^T, new array
    scores *= scale                                         # S = Q K^T / sqrt(dk)
    if keep is not None and not keep.all():                 # an all-True mask changes nothing
        np.copyto(scores, -np.inf, where=~keep)             # masked keys -> -inf
    m = row_max(scores)                                     # (B, H, Tq, 1)
    m = np.where(np.isfinite(m), m, 0)                      # empty row: shift by 0
    e = np.exp(np.subtract(scores, m, out=scores), out=scores)
    denom = e.sum(axis=-1, keepdims=True)                   # 0 on empty rows
    weights = np.divide(e, np.where(denom > 0, denom, 1), out=e)   # P; empty row 0 / 1 = 0
    return weights, WeightsCache(q, k, weights, scale)


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
    shape = q.shape[:-2] + (q.shape[-2], k.shape[-2])
    if (q.ndim != 4 or k.ndim != 4
            or split_parts(max(shape[:-1]), math.prod(shape), threads) <= 1):
        return _weights_one_piece(q, k, keep)
    scale = 1.0 / math.sqrt(q.shape[-1])
    scores = q @ k.swapaxes(-1, -2)                         # (B, H, Tq, Tk) Q K^T, new array
    if keep is not None and keep.all():
        keep = None                                         # an all-True mask changes nothing
    if keep is not None:
        keep = keep.reshape((1,) * (4 - keep.ndim) + keep.shape)   # 4-d, for slicing
    axis = _split_axis(scores.shape)
    cut = _slicer(axis, 4)

    def job(lo, hi):
        s = cut(scores, lo, hi)
        s *= scale                                          # S = Q K^T / sqrt(dk)
        if keep is not None:
            np.copyto(s, -np.inf, where=~cut(keep, lo, hi))  # masked keys -> -inf
        m = s.max(axis=-1, keepdims=True)
        m = np.where(np.isfinite(m), m, 0)                  # empty row: shift by 0
        np.subtract(s, m, out=s)
        np.exp(s, out=s)
        denom = s.sum(axis=-1, keepdims=True)               # 0 on empty rows
        np.divide(s, np.where(denom > 0, denom, 1), out=s)  # P; empty row 0 / 1 = 0
    run_rows(job, scores.shape[axis], scores.size, threads)
    return scores, WeightsCache(q, k, scores, scale)


def softmax_scores_backward(dweights: np.ndarray, weights: np.ndarray, threads: int = 1):
    """dS = P * (dP - rowsum(dP * P)) (B, H, Tq, Tk), the plain backward's steps in its order, on
    slices over `threads` threads; None when dP and P differ in shape (the caller runs the plain
    backward, which broadcasts)."""
    if dweights.shape != weights.shape or dweights.ndim != 4:
        return None
    dscores = np.empty(weights.shape, dtype=np.result_type(dweights, weights))
    axis = _split_axis(dscores.shape)
    cut = _slicer(axis, 4)

    def job(lo, hi):
        d, w, o = cut(dweights, lo, hi), cut(weights, lo, hi), cut(dscores, lo, hi)
        np.multiply(d, w, out=o)                            # dP * P
        row_dot = o.sum(axis=-1, keepdims=True)             # rowsum(dP * P)
        np.subtract(d, row_dot, out=o)
        o *= w                                              # dS = P (dP - rowsum(dP * P))
    run_rows(job, dscores.shape[axis], dscores.size, threads)
    return dscores


def attention_weights_backward(dweights: np.ndarray, cache: WeightsCache, threads: int = 1):
    """npformer.layers.attention.attention_weights_backward's (dq, dk), the softmax backward on
    slices over `threads` threads."""
    q, k, weights, scale = cache
    dscores = softmax_scores_backward(dweights, weights, threads) if threads > 1 else None
    if dscores is None:
        return plain_weights_backward(dweights, cache)
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
