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
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from npformer.layers.module import Module
from npformer.layers.softmax import log_softmax_forward
from npformer.layers.validation import check_float, check_grad


def _check_targets(targets, num_classes: int, ignore_index: int, n_rows: int) -> np.ndarray:
    if not isinstance(targets, np.ndarray):
        targets = np.asarray(targets)
    if targets.dtype == np.bool_ or not np.issubdtype(targets.dtype, np.integer):
        raise TypeError(f"targets: expected integer class indices, got dtype {targets.dtype}")
    if targets.shape != (n_rows,):
        raise ValueError(f"targets: expected shape ({n_rows},), got {targets.shape}")
    bad = (targets != ignore_index) & ((targets < 0) | (targets >= num_classes))
    if bad.any():
        raise ValueError(f"targets: expected class indices in [0, {num_classes}) or "
                         f"ignore_index={ignore_index}, got {targets[bad][:5].tolist()}")
    return targets


# --------------------------------------------------------------------------------------------------
# functional pair
# --------------------------------------------------------------------------------------------------
class CrossEntropyCache(NamedTuple):
    logp: np.ndarray       # (N, C) log-probabilities
    targets: np.ndarray    # (N,) target class, 0 where ignored (any valid index; masked out)
    counted: np.ndarray    # (N,) bool, target != ignore_index
    n_counted: int         # number of counted rows (> 0)
    smoothing: float       # label_smoothing eps


def cross_entropy_forward(logits: np.ndarray, targets: np.ndarray, ignore_index: int = -100,
                          label_smoothing: float = 0.0):
    """Mean cross entropy of logits (N, C) against targets (N,). Returns (loss (0-d array), cache).

    Raises ValueError when every target equals ignore_index (see the module docstring).
    """
    if logits.ndim != 2:
        raise ValueError(f"logits: expected 2 dimensions (N, C), got shape {logits.shape}")
    N, C = logits.shape
    targets = _check_targets(targets, C, ignore_index, N)
    counted = targets != ignore_index                               # (N,) bool
    n_counted = int(np.count_nonzero(counted))
    if n_counted == 0:
        raise ValueError(f"targets: every target equals ignore_index={ignore_index}; the mean over "
                         f"zero counted targets is undefined (torch would return NaN)")
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


# --------------------------------------------------------------------------------------------------
# module
# --------------------------------------------------------------------------------------------------
class CrossEntropyLoss(Module):
    """loss = CrossEntropyLoss(...)(logits (..., C), targets (...)): a 0-d array (mean over counted
    targets). backward(dout=1.0) returns dlogits of logits' shape."""

    def __init__(self, ignore_index: int = -100, label_smoothing: float = 0.0):
        super().__init__()
        if isinstance(ignore_index, bool) or not isinstance(ignore_index, (int, np.integer)):
            raise TypeError(f"ignore_index: expected an int, got {type(ignore_index).__name__}")
        if (isinstance(label_smoothing, bool) or not isinstance(label_smoothing, (int, float))
                or not 0.0 <= label_smoothing <= 1.0):
            raise ValueError(f"label_smoothing: expected a float in [0, 1], got {label_smoothing!r}")
        self.ignore_index = int(ignore_index)
        self.label_smoothing = float(label_smoothing)

    def check_inputs(self, logits, targets):
        check_float("logits", logits)
        if logits.ndim == 0:
            raise ValueError("logits: expected shape (..., C), got a 0-d array")
        targets = np.asarray(targets)
        if targets.shape != logits.shape[:-1]:
            raise ValueError(f"targets: expected shape {logits.shape[:-1]} (logits' leading "
                             f"dimensions), got {targets.shape}")
        return logits, targets          # (their values are checked by cross_entropy_forward)

    def forward(self, logits: np.ndarray, targets: np.ndarray) -> np.ndarray:
        C = logits.shape[-1]
        loss, cache = cross_entropy_forward(logits.reshape(-1, C), targets.reshape(-1),
                                            self.ignore_index, self.label_smoothing)
        self._cache = (cache, loss, logits.shape)
        return loss

    def backward(self, dout=1.0) -> np.ndarray:
        cache, loss, shape = self._require_cache()
        if isinstance(dout, np.generic):
            dout = np.asarray(dout)                                # numpy scalar: dtype checked
        elif isinstance(dout, (int, float)) and not isinstance(dout, bool):
            dout = np.asarray(dout, dtype=loss.dtype)              # the usual call: backward()
        check_grad("dout", dout, loss)
        return cross_entropy_backward(dout, cache).reshape(shape)  # (..., C)

    def extra_repr(self) -> str:
        return f"ignore_index={self.ignore_index}, label_smoothing={self.label_smoothing}"
