"""Softmax and log-softmax along one axis, numerically stable, safe on masked (-inf) entries.

    softmax(x)_i     = exp(x_i - m) / sum_j exp(x_j - m)        m = max_j x_j (changes nothing
    log_softmax(x)_i = x_i - m - log sum_j exp(x_j - m)         mathematically, prevents overflow)

Backward (y the forward output, G = dL/dy, sums along the axis):

    softmax:      dL/dx = y * (G - sum(G * y))                  from dy_i/dx_k = y_i (delta_ik - y_k)
    log_softmax:  dL/dx = G - softmax(x) * sum(G)               from dy_i/dx_k = delta_ik - p_k

-inf entries (masked logits) get probability 0, and through softmax a zero gradient. A row that is
entirely -inf has no finite maximum: softmax returns zeros there (not 0/0 = NaN) with zero gradient,
log_softmax returns -inf (the log of those zero probabilities). +inf or NaN inputs give NaN: they are
not a valid score, and callers validate their inputs before this point.
"""
from typing import NamedTuple

import numpy as np


def _shifted(x: np.ndarray, axis: int):
    """x - max(x) along axis, with the max of an all -inf row taken as 0 (the row stays -inf)."""
    m = np.max(x, axis=axis, keepdims=True)                 # (..., 1, ...)
    m = np.where(np.isneginf(m), np.zeros_like(m), m)       # all -inf row: shift by 0, not by -inf
    with np.errstate(over="ignore"):                        # a gap beyond the float range is -inf,
        return x - m                                        # (...) whose exp is the right 0


# -- softmax ---------------------------------------------------------------------------------------
class SoftmaxCache(NamedTuple):
    y: np.ndarray          # (...) the probabilities
    axis: int


def softmax_forward(x: np.ndarray, axis: int = -1):
    """Probabilities along `axis`; rows that are entirely -inf give all zeros."""
    e = np.exp(_shifted(x, axis))                           # (...) in [0, 1], 0 at -inf
    s = e.sum(axis=axis, keepdims=True)                     # (..., 1, ...) >= 1, or 0 on empty rows
    y = e / np.where(s > 0, s, np.ones_like(s))             # (...) empty rows: 0 / 1 = 0
    return y, SoftmaxCache(y, axis)


def softmax_backward(dout: np.ndarray, cache: SoftmaxCache) -> np.ndarray:
    y, axis = cache
    return y * (dout - (dout * y).sum(axis=axis, keepdims=True))    # (...)


# -- log-softmax -----------------------------------------------------------------------------------
class LogSoftmaxCache(NamedTuple):
    y: np.ndarray          # (...) the log-probabilities (softmax = exp(y))
    axis: int


def log_softmax_forward(x: np.ndarray, axis: int = -1):
    """Log-probabilities along `axis`; -inf entries stay -inf, all -inf rows give all -inf."""
    z = _shifted(x, axis)                                   # (...)
    s = np.exp(z).sum(axis=axis, keepdims=True)             # (..., 1, ...) >= 1, or 0 on empty rows
    with np.errstate(divide="ignore"):                      # log(0) = -inf on empty rows, wanted
        lse = np.log(s)                                     # (..., 1, ...)
    y = z - np.where(np.isneginf(lse), np.zeros_like(lse), lse)  # (...) empty rows stay -inf
    return y, LogSoftmaxCache(y, axis)


def log_softmax_backward(dout: np.ndarray, cache: LogSoftmaxCache) -> np.ndarray:
    y, axis = cache
    p = np.exp(y)                                           # (...) softmax, 0 at -inf entries
    return dout - p * dout.sum(axis=axis, keepdims=True)    # (...)
