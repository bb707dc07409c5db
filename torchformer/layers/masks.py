"""Attention keep-masks (True = this query may attend to this key), twin of npformer.layers.masks.

    padding_mask(ids (B, T), pad_id) -> (B, 1, 1, T)   keys that are not padding
    causal_mask(q_len, k_len=None)   -> (1, 1, q_len, k_len)   j <= i + (k_len - q_len)
    combine_masks(*masks)            -> logical AND with broadcasting (None skipped)

The causal mask is bottom-right aligned (query i is the (k_len - q_len + i)-th position), which is what
a KV cache needs; it equals SDPA's top-left `is_causal` only when q_len == k_len.

These take tensors and check nothing; `torchformer.padding_mask` etc. are the same functions with their
arguments checked (torchformer.guards.functional).
"""
from __future__ import annotations

import torch


def padding_mask(ids, pad_id: int | None) -> torch.Tensor | None:
    """(B, 1, 1, T) bool keep-mask: True where ids (B, T) != pad_id; None when pad_id is None.
    ids: a tensor, or anything torch.as_tensor takes."""
    if pad_id is None:
        return None
    return (torch.as_tensor(ids) != pad_id)[:, None, None, :]                # (B, 1, 1, T)


def causal_mask(q_len: int, k_len: int | None = None, device=None) -> torch.Tensor:
    """(1, 1, q_len, k_len) bool: query i may see key j when j <= i + (k_len - q_len).

    With k_len < q_len the first q_len - k_len queries see no key (fully masked rows)."""
    k_len = q_len if k_len is None else k_len
    i = torch.arange(q_len, device=device)[:, None]                          # (Tq, 1)
    j = torch.arange(k_len, device=device)[None, :]                          # (1, Tk)
    return (j <= i + (k_len - q_len))[None, None]                            # (1, 1, Tq, Tk)


def combine_masks(*masks) -> torch.Tensor | None:
    """Logical AND of the given bool keep-masks (tensors, or anything torch.as_tensor takes) with
    broadcasting; None entries are skipped, None if all are None."""
    out = None
    for m in masks:
        if m is not None:
            m = torch.as_tensor(m)
            out = m if out is None else out & m.to(out.device)
    return out
