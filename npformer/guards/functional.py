"""The checked public names of the functional pairs and mask helpers that take arguments to refuse.

`npformer.sdpa_forward`, `npformer.dropout_forward`, `npformer.padding_mask`, ... are these: each
checks its arguments (the message names the argument, what was expected and what came) and then runs
the plain function of npformer.layers, which checks nothing. The per-layer pairs (linear, layernorm,
embedding, the activations, softmax ...) are checked the same way in functional_layers.py.
"""
from __future__ import annotations

import numpy as np

from npformer.guards.keep_masks import check_keep_mask
from npformer.guards.layers import check_targets, loss_init
from npformer.guards.rules import check_count, check_has_keys, check_pad_id
from npformer.guards.validation import (
    bool_mask,
    check_dtype,
    check_float,
    check_grad,
    check_ids,
    check_mask,
    check_probability,
    describe,
)
from npformer.layers import attention, dropout, loss, masks, positional


def dropout_forward(x, p: float, mask):
    """npformer.layers.dropout.dropout_forward, checked: p in [0, 1), mask bool of x's shape or None."""
    p = check_probability("p", p)
    if mask is not None:
        check_keep_mask("mask", mask, x.shape)
    return dropout.dropout_forward(x, p, mask)


def sdpa_forward(q, k, v, mask=None, dropout_mask=None, dropout_p: float = 0.0):
    """npformer.layers.attention.sdpa_forward, checked: q (B, H, Tq, dk), k (B, H, Tk, dk),
    v (B, H, Tk, dv) of one float dtype, mask a keep-mask broadcastable to (B, H, Tq, Tk)."""
    check_float("q", q, ndim=4)
    check_float("k", k, dtype=q.dtype, ndim=4, owner="q's")
    B, H, Tq, dk = q.shape
    if k.shape[:2] != (B, H) or k.shape[3] != dk:
        raise ValueError(f"k: expected shape ({B}, {H}, Tk, {dk}) to match q {q.shape}, got {k.shape}")
    check_float("v", v, dtype=q.dtype, ndim=4, owner="q's")
    if v.shape[:3] != k.shape[:3]:
        raise ValueError(f"v: expected shape ({B}, {H}, {k.shape[2]}, dv) to match k {k.shape}, "
                         f"got {v.shape}")
    check_has_keys("k", k.shape, 2)
    keep = check_mask("mask", mask, (B, H, Tq, k.shape[2]))
    dropout_p = check_probability("p", dropout_p)
    if dropout_mask is not None:
        check_keep_mask("mask", dropout_mask, (B, H, Tq, k.shape[2]))
    return attention.sdpa_forward(q, k, v, keep, dropout_mask, dropout_p)


def sdpa_backward(dout, cache):
    """npformer.layers.attention.sdpa_backward, checked: dout has the shape and dtype of the output."""
    dropped, v = cache.dropped, cache.v
    check_grad("dout", dout, np.empty(dropped.shape[:3] + v.shape[3:], dtype=v.dtype))
    return attention.sdpa_backward(dout, cache)


def cross_entropy_forward(logits, targets, ignore_index: int = -100, label_smoothing: float = 0.0):
    """npformer.layers.loss.cross_entropy_forward, checked: logits (N, C), targets (N,) class indices
    or ignore_index, at least one counted; ignore_index an int, label_smoothing in [0, 1] (as for
    CrossEntropyLoss: NaN would make every loss NaN)."""
    loss_init(ignore_index, label_smoothing)
    logits = check_float("logits", logits, finite=False)
    if logits.ndim != 2:
        raise ValueError(f"logits: expected 2 dimensions (N, C), got shape {logits.shape}")
    N, C = logits.shape
    targets = check_targets(targets, C, ignore_index, N)
    return loss.cross_entropy_forward(logits, targets, ignore_index, label_smoothing)


def sinusoidal_table(max_len: int, d_model: int, dtype="float32"):
    """npformer.layers.positional.sinusoidal_table, checked: dtype float32 or float64."""
    return positional.sinusoidal_table(max_len, d_model, check_dtype("dtype", dtype))


def padding_mask(ids, pad_id):
    """npformer.layers.masks.padding_mask, checked: ids integer (B, T), pad_id an int or None."""
    ids = check_ids("ids", ids, np.iinfo(np.int64).max)       # integer (B, T), non-negative
    return masks.padding_mask(ids, check_pad_id(pad_id))


def causal_mask(q_len, k_len=None):
    """npformer.layers.masks.causal_mask, checked: non-negative int lengths."""
    q_len = check_count("q_len", q_len)
    return masks.causal_mask(q_len, None if k_len is None else check_count("k_len", k_len))


def combine_masks(*given):
    """npformer.layers.masks.combine_masks, checked: arrays of bool (or 0/1 integers) or None, shapes
    that broadcast together."""
    checked = []
    for i, m in enumerate(given):
        if m is None:
            continue
        if not isinstance(m, np.ndarray):
            raise TypeError(f"masks[{i}]: expected a numpy array or None, got {describe(m)}")
        checked.append(bool_mask(f"masks[{i}]", m))
    try:
        np.broadcast_shapes(*(m.shape for m in checked))
    except ValueError:
        raise ValueError(f"masks: expected shapes that broadcast together, got "
                         f"{[m.shape for m in checked]}") from None
    return masks.combine_masks(*checked)
