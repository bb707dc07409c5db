"""Cross-entropy loss over logits, with torch's `ignore_index` and `label_smoothing` semantics.

For row n with logits z_n (C classes), log-probabilities l_n = log_softmax(z_n) and target t_n:

    nll_n    = -l_n[t_n]
    smooth_n = -mean_c l_n[c]                                 (the loss against a uniform target)
    loss_n   = (1 - eps) nll_n + eps smooth_n                 eps = label_smoothing
    loss     = sum_n counted_n loss_n / N_counted             counted_n = (t_n != ignore_index)

This is torch.nn.functional.cross_entropy(reduction="mean"): it equals the cross entropy against the
smoothed target distribution q_n = (1 - eps) onehot(t_n) + eps / C, and ignored rows count neither in
the sum nor in N_counted. Backward (p_n = softmax(z_n), G the upstream scalar):

    dL/dz_n = G * counted_n / N_counted * (p_n - q_n)

When every target is ignored the mean is 0/0; torch returns NaN there, this module raises a ValueError
instead, so a batch without a single counted target is noticed rather than turned into a NaN update.
"""
from typing import NamedTuple

import numpy as np

from npformer.layers.module import Module
from npformer.layers.softmax import log_softmax_forward


# -- functional pair -------------------------------------------------------------------------------
class CrossEntropyCache(NamedTuple):
    logp: np.ndarray       # (N, C) log-probabilities
    targets: np.ndarray    # (N,) target class, 0 where ignored (any valid index; masked out)
    counted: np.ndarray    # (N,) bool, target != ignore_index
    n_counted: int         # number of counted rows (> 0)
    smoothing: float       # label_smoothing eps


def cross_entropy_forward(logits: np.ndarray, targets: np.ndarray, ignore_index: int = -100,
                          label_smoothing: float = 0.0):
    """Mean cross entropy of logits (N, C) against targets (N,). Returns (loss (0-d array), cache).

    At least one target must be counted (npformer.cross_entropy_forward checks the arguments).
    """
    counted = targets != ignore_index                               # (N,) bool
    n_counted = int(np.count_nonzero(counted))
    safe_t = np.where(counted, targets, 0)                          # (N,) a valid index everywhere
    logp, _ = log_softmax_forward(logits, axis=-1)                  # (N, C)
    nll = -np.take_along_axis(logp, safe_t[:, None], axis=1)[:, 0]  # (N,) -log p[target]
    per_row = (1.0 - label_smoothing) * nll                         # (N,)
    if label_smoothing:
        per_row = per_row - label_smoothing * logp.mean(axis=1)     # (N,) + eps * -mean_c log p_c
    loss = np.where(counted, per_row, 0).sum() / n_counted          # () ignored rows add 0
    loss = np.asarray(loss, dtype=logits.dtype)                     # () 0-d array, logits' dtype
    return loss, CrossEntropyCache(logp, safe_t, counted, n_counted, float(label_smoothing))


def cross_entropy_backward(dout, cache: CrossEntropyCache) -> np.ndarray:
    """dlogits (N, C) = dout * counted / N_counted * (softmax - smoothed one-hot target)."""
    logp, targets, counted, n_counted, eps = cache
    N, C = logp.shape
    q = np.zeros_like(logp)                                         # (N, C) smoothed target q
    q[np.arange(N), targets] = 1.0 - eps                            # (1 - eps) on the target class
    q += eps / C                                                    # + eps / C everywhere
    g = np.asarray(dout, dtype=logp.dtype) / n_counted              # () upstream over the count
    row_weight = counted * g                                        # (N,) 0 on ignored rows
    return (np.exp(logp) - q) * row_weight[:, None]                 # (N, C) (p - q) per counted row


# -- module ----------------------------------------------------------------------------------------
class CrossEntropyLoss(Module):
    """loss = CrossEntropyLoss(...)(logits (..., C), targets (...)): a 0-d array (mean over counted
    targets). backward(dout=1.0) returns dlogits of logits' shape."""

    def __init__(self, ignore_index: int = -100, label_smoothing: float = 0.0):
        super().__init__()
        self.ignore_index = int(ignore_index)
        self.label_smoothing = float(label_smoothing)

    def forward(self, logits: np.ndarray, targets: np.ndarray) -> np.ndarray:
        C = logits.shape[-1]
        loss, cache = cross_entropy_forward(logits.reshape(-1, C), targets.reshape(-1),
                                            self.ignore_index, self.label_smoothing)
        self._cache = (cache, logits.shape, loss)
        return loss

    def backward(self, dout=1.0) -> np.ndarray:
        cache, shape, _ = self._require_cache()
        return cross_entropy_backward(dout, cache).reshape(shape)  # (..., C)

    def extra_repr(self) -> str:
        return f"ignore_index={self.ignore_index}, label_smoothing={self.label_smoothing}"
