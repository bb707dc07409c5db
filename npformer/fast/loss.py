"""npformer.layers.loss's cross entropy with its (N, C) passes on row ranges over threads.

The log-softmax (npformer.fast.softmax.log_softmax_rows) and the gradient (softmax - smoothed
one-hot) * row weight run on row ranges; the backward writes exp(log p) into its output and
subtracts the smoothed target in place instead of building the (N, C) target q. The per-row
losses and their mean are (N,) work, done as the plain code does. Each element gets the plain
operations in the same order: the same bits (tests/npformer/fast/test_fast_elementwise.py).
"""
from __future__ import annotations

import numpy as np

from npformer.fast.rows import run_rows
from npformer.fast.softmax import log_softmax_rows
from npformer.guards.functional import cross_entropy_forward as plain_forward
from npformer.layers.loss import CrossEntropyCache

__all__ = ["cross_entropy_forward", "cross_entropy_backward"]


def cross_entropy_forward(logits: np.ndarray, targets: np.ndarray, ignore_index: int = -100,
                          label_smoothing: float = 0.0, threads: int = 1):
    """cross_entropy_forward(logits (N, C), targets (N,), ...)'s (loss, cache), the log-softmax on
    row ranges over `threads` threads. Arguments the plain function would refuse are handed to it,
    so the errors are its own."""
    if logits.ndim != 2 or not logits.flags.c_contiguous or logits.shape[0] == 0:
        return plain_forward(logits, targets, ignore_index, label_smoothing)
    N, C = logits.shape
    targets = np.asarray(targets)
    if targets.shape != (N,) or targets.dtype == np.bool_ or not np.issubdtype(targets.dtype,
                                                                                 np.integer):
        return plain_forward(logits, targets, ignore_index, label_smoothing)   # raises its error
    counted = targets != ignore_index                               # (N,) bool
    bad = counted & ((targets < 0) | (targets >= C))
    if bad.any() or not counted.any():
        return plain_forward(logits, targets, ignore_index, label_smoothing)   # raises its error
    n_counted = int(np.count_nonzero(counted))
    safe_t = np.where(counted, targets, 0)                          # (N,) a valid index everywhere
    logp, _ = log_softmax_rows(logits, threads)                     # (N, C)
    nll = -np.take_along_axis(logp, safe_t[:, None], axis=1)[:, 0]  # (N,) -log p[target]
    per_row = (1.0 - label_smoothing) * nll                         # (N,)
    if label_smoothing:
        mean = np.empty(N, dtype=logp.dtype)

        def row_means(lo, hi):
            mean[lo:hi] = logp[lo:hi].mean(axis=1)
        run_rows(row_means, N, logp.size, threads)
        per_row = per_row - label_smoothing * mean                  # (N,) + eps * -mean_c log p_c
    loss = np.where(counted, per_row, 0).sum() / n_counted          # () ignored rows add 0
    loss = np.asarray(loss, dtype=logits.dtype)
    return loss, CrossEntropyCache(logp, safe_t, counted, n_counted, float(label_smoothing))


def cross_entropy_backward(dout, cache: CrossEntropyCache, threads: int = 1) -> np.ndarray:
    """cross_entropy_backward(dout, cache)'s dlogits (N, C), on row ranges over `threads` threads.

    The plain code builds q (zeros, then 1 - eps at each target, then + eps / C everywhere) and
    returns (exp(log p) - q) * row weight. Here q's two values are made the same way in the
    dtype, off_target = 0 + eps / C and on_target = (1 - eps) + eps / C, and subtracted in place.
    """
    logp, targets, counted, n_counted, eps = cache
    N, C = logp.shape
    off_target = np.zeros((), dtype=logp.dtype)
    off_target += eps / C                                           # q away from the target
    on_target = np.full((), 1.0 - eps, dtype=logp.dtype)
    on_target += eps / C                                            # q at the target
    g = np.asarray(dout, dtype=logp.dtype) / n_counted              # () upstream over the count
    row_weight = counted * g                                        # (N,) 0 on ignored rows
    dx = np.empty_like(logp)

    def job(lo, hi):
        o = dx[lo:hi]
        np.exp(logp[lo:hi], out=o)                                  # p
        rows = np.arange(hi - lo)
        t = targets[lo:hi]
        p_t = o[rows, t]                                            # (n,) p at the targets (copy)
        o -= off_target
        o[rows, t] = p_t - on_target                                # p - q
        o *= row_weight[lo:hi, None]
    run_rows(job, N, logp.size, threads, blocked=True)
    return dx
