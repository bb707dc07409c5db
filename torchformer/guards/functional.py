"""The checked public functions of torchformer (the twin of npformer.guards.functional).

`torchformer.scaled_dot_product_attention`, `torchformer.padding_mask`, `causal_mask` and
`combine_masks` are these: each checks its arguments (the message names the argument, what was
expected and what came) and then runs the plain function of torchformer.layers, which checks nothing
and is what the models call.
"""
from __future__ import annotations

import numpy as np
import torch

from npformer.guards.rules import check_has_keys, check_pad_id
from torchformer.guards.validation import (
    check_count,
    check_device_arg,
    check_float,
    check_ids,
    check_mask,
)
from torchformer.layers import attention, masks


def scaled_dot_product_attention(q, k, v, mask=None, dropout_mask=None, dropout_p: float = 0.0,
                                 need_weights=True):
    """torchformer.layers.attention.scaled_dot_product_attention, checked: q (B, H, Tq, dk),
    k (B, H, Tk, dk), v (B, H, Tk, dv) of one float dtype, mask a keep-mask broadcastable to
    (B, H, Tq, Tk) (bool or 0/1, tensor or numpy), dropout_p in [0, 1), dropout_mask bool (B, H, Tq, Tk)."""
    check_float("q", q, ndim=4)
    check_float("k", k, dtype=q.dtype, device=q.device, ndim=4, owner="q's")
    check_float("v", v, dtype=q.dtype, device=q.device, ndim=4, owner="q's")
    B, H, Tq, dk = q.shape
    if k.shape[:2] != (B, H) or k.shape[3] != dk:
        raise ValueError(f"k: expected shape ({B}, {H}, Tk, {dk}) to match q {tuple(q.shape)}, "
                         f"got {tuple(k.shape)}")
    Tk = k.shape[2]
    if v.shape[:3] != (B, H, Tk):
        raise ValueError(f"v: expected shape ({B}, {H}, {Tk}, dv) to match k {tuple(k.shape)}, "
                         f"got {tuple(v.shape)}")
    check_has_keys("k", k.shape, 2)
    keep = check_mask("mask", mask, (B, H, Tq, Tk), device=q.device)
    if isinstance(dropout_p, bool) or not (isinstance(dropout_p, (int, float))
                                           and 0.0 <= dropout_p < 1.0):
        raise ValueError(f"dropout_p: expected a float in [0, 1), got {dropout_p!r}")
    if dropout_mask is not None:
        dropout_mask = torch.as_tensor(dropout_mask, device=q.device)
        if dropout_mask.dtype != torch.bool or tuple(dropout_mask.shape) != (B, H, Tq, Tk):
            raise ValueError(f"dropout_mask: expected a bool tensor of shape {(B, H, Tq, Tk)}, got "
                             f"shape {tuple(dropout_mask.shape)} and dtype {dropout_mask.dtype}")
    return attention.scaled_dot_product_attention(q, k, v, keep, dropout_mask, float(dropout_p),
                                                  need_weights)


def padding_mask(ids, pad_id):
    """torchformer.layers.masks.padding_mask, checked: ids integer (B, T) (tensor, numpy or lists),
    pad_id an int or None."""
    device = ids.device if isinstance(ids, torch.Tensor) else None
    ids = check_ids("ids", ids, vocab_size=2 ** 62, device=device)   # integer (B, T), non-negative
    return masks.padding_mask(ids, check_pad_id(pad_id))


def causal_mask(q_len, k_len=None, device=None):
    """torchformer.layers.masks.causal_mask, checked: non-negative int lengths."""
    q_len = check_count("q_len", q_len)
    return masks.causal_mask(q_len, None if k_len is None else check_count("k_len", k_len),
                             device=check_device_arg("device", device))


def combine_masks(*given):
    """torchformer.layers.masks.combine_masks, checked: keep-masks (bool or 0/1 integers; tensors,
    numpy arrays or lists) or None, shapes that broadcast together (npformer's message)."""
    checked, shapes = [], []
    for n, m in enumerate(given):
        if m is None:
            continue
        shape = tuple(m.shape) if hasattr(m, "shape") else tuple(np.shape(m))
        checked.append(check_mask(f"masks[{n}]", m, shape))                   # bool tensor
        shapes.append(shape)
    try:
        torch.broadcast_shapes(*shapes)
    except RuntimeError:
        raise ValueError(f"masks: expected shapes that broadcast together, got {shapes}") from None
    return masks.combine_masks(*checked)
