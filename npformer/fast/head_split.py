"""The attention core of MultiHeadAttention, softmax(Q K^T / sqrt(dk)) V, with its batch (or heads)
cut into slices that run on worker threads: the per-head products and the softmax of each slice
on one thread.

At the models' shapes the per-head products are small (base and GPT-2 small: 64 x 64 x 64), too
small for OpenBLAS to thread (it runs a product of M * N * K <= SINGLE_THREAD_PRODUCT on one
thread), and NumPy's stacked matmul calls them one after the other; the softmax passes on a few
hundred thousand elements stay below npformer.fast.rows.MIN_ELEMENTS per thread. So at 2 threads
the whole core ran on one core. Here each thread takes whole (batch, head) matrices: its products
(the same BLAS calls on the same matrices, written into its slice of the full arrays) and the
softmax steps of npformer.fast.softmax's one-piece path on its slice. Every softmax row lies whole
in one slice and every product is the same call, so the results are the plain ones bit for bit
(tests/npformer/fast/test_fast_head_split.py).

    weights_into(q, k, keep, out)          P for one slice, into `out` (the plain steps, in place)
    split_attention(q, k, v, keep, threads) (weights, merged P V) or None (not split)

The accelerated attention uses it in eval mode only (inference, the benchmark's forward), where the
dropout changes nothing; a training-mode forward keeps the path it had (docs/PERFORMANCE.md says
why).
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from npformer.fast.rows import row_ranges, shared_pool
from npformer.fast.softmax import row_max

__all__ = ["SINGLE_THREAD_PRODUCT", "MIN_SLICE_ELEMENTS", "split_axis", "weights_into",
           "split_attention"]

# OpenBLAS runs a GEMM of M * N * K <= 65536 * GEMM_MULTITHREAD_THRESHOLD (4 by default) on one
# thread (interface/gemm.c); above it, BLAS threads each product itself and the plain path is kept.
SINGLE_THREAD_PRODUCT = 65536 * 4

# Scores elements per thread from which the core is split (below, handing a slice to the pool
# would cost about what the second core saves). An estimate, not yet measured on an idle machine:
# docs/PERFORMANCE.md ("The forward at 2 threads") says how to settle it.
MIN_SLICE_ELEMENTS = 16384


def split_axis(B: int, H: int, parts: int) -> int:
    """0 (the batch) when it has at least `parts` entries or more than the heads, else 1."""
    return 0 if B >= parts or B >= H else 1


def _cut(a: np.ndarray | None, axis: int, lo: int, hi: int):
    """a[lo:hi] along `axis` (0 or 1); a broadcast (size-1) axis or None is returned whole."""
    if a is None or a.shape[axis] == 1:
        return a
    return a[lo:hi] if axis == 0 else a[:, lo:hi]


def weights_into(q: np.ndarray, k: np.ndarray, keep: np.ndarray | None, out: np.ndarray) -> None:
    """npformer.fast.softmax._weights_one_piece's P = softmax(Q K^T / sqrt(dk)), the same steps in
    the same order, written into `out` (B, H, Tq, Tk) (contiguous in its last two axes)."""
    scale = 1.0 / math.sqrt(q.shape[-1])
    scores = np.matmul(q, k.swapaxes(-1, -2), out=out)          # Q K^T into out
    scores *= scale
    if keep is not None and not keep.all():                     # an all-True mask changes nothing
        np.copyto(scores, -np.inf, where=~keep)
    m = row_max(scores)
    m = np.where(np.isfinite(m), m, 0)                          # empty row: shift by 0
    e = np.exp(np.subtract(scores, m, out=scores), out=scores)
    denom = e.sum(axis=-1, keepdims=True)
    np.divide(e, np.where(denom > 0, denom, 1), out=e)          # empty row 0 / 1 = 0


def _run(job: Callable[[int, int], None], n: int, parts: int) -> None:
    """job(lo, hi) on `parts` ranges of n: the first in the calling thread, the others in
    npformer.fast.rows' shared pool (run_rows without its element-count rule: the caller decided)."""
    ranges = row_ranges(n, parts)
    futures = [shared_pool(parts - 1).submit(job, lo, hi) for lo, hi in ranges[1:]]
    try:
        job(*ranges[0])
    finally:
        for f in futures:
            f.exception()                                       # wait for every range
    for f in futures:
        f.result()                                              # re-raise a worker's error


def split_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, keep: np.ndarray | None,
                    threads: int):
    """(weights P, merged (B, Tq, H * dv) = merge_heads(P @ V)) with the (batch, head) matrices
    cut into slices over `threads` threads, or None when the core is not split (one thread, too
    little work, shapes that broadcast, products BLAS threads itself). For an attention whose
    dropout changes nothing (eval mode, p = 0): P @ V stands for P~ @ V.

    q (B, H, Tq, dk), k (B, H, Tk, dk), v (B, H, Tk, dv); keep: the bool keep-mask (4-d or fewer
    axes, broadcastable) or None.
    """
    if threads < 2 or q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        return None
    B, H, Tq, dk = q.shape
    Tk, dv = k.shape[2], v.shape[3]
    if k.shape != (B, H, Tk, dk) or v.shape != (B, H, Tk, dv):
        return None
    if max(Tq * Tk * dk, Tq * dv * Tk) > SINGLE_THREAD_PRODUCT:
        return None
    axis = split_axis(B, H, threads)
    n = (B, H)[axis]
    parts = min(threads, n, B * H * Tq * Tk // MIN_SLICE_ELEMENTS)
    if parts < 2:
        return None
    if keep is not None:
        keep = keep.reshape((1,) * (4 - keep.ndim) + keep.shape)   # 4-d, for slicing
    dtype = np.result_type(q, k)
    weights = np.empty((B, H, Tq, Tk), dtype=dtype)
    merged = np.empty((B, Tq, H, dv), dtype=np.result_type(weights, v))
    heads_out = merged.transpose(0, 2, 1, 3)                    # (B, H, Tq, dv) view of merged

    def job(lo: int, hi: int) -> None:
        weights_into(_cut(q, axis, lo, hi), _cut(k, axis, lo, hi), _cut(keep, axis, lo, hi),
                     _cut(weights, axis, lo, hi))
        np.matmul(_cut(weights, axis, lo, hi), _cut(v, axis, lo, hi),
                  out=_cut(heads_out, axis, lo, hi))
    _run(job, n, parts)
    return weights, merged.reshape(B, Tq, H * dv)
