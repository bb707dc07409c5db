"""Attention keep-masks (True = this query may attend to this key), twin of npformer.masks.

    padding_mask(ids (B, T), pad_id) -> (B, 1, 1, T)   keys that are not padding
    causal_mask(q_len, k_len=None)   -> (1, 1, q_len, k_len)   j <= i + (k_len - q_len)
    combine_masks(*masks)            -> logical AND with broadcasting (None skipped)

The causal mask is bottom-right aligned (query i is the (k_len - q_len + i)-th position), which is what
a KV cache needs; it equals SDPA's top-left `is_causal` only when q_len == k_len.
"""
from __future__ import annotations

import torch

from torchformer.validation import check_ids, check_mask


def padding_mask(ids, pad_id: int | None) -> torch.Tensor | None:
    """(B, 1, 1, T) bool keep-mask: True where ids != pad_id; None when pad_id is None."""
    if not isinstance(ids, torch.Tensor):
        ids = check_ids("ids", ids, vocab_size=2 ** 62)
    if ids.dim() != 2:
        raise ValueError(f"ids: expected 2 dimensions (batch, seq), got shape {tuple(ids.shape)}")
    if pad_id is None:
        return None
    if isinstance(pad_id, bool) or not isinstance(pad_id, int):
        raise TypeError(f"pad_id: expected an int or None, got {type(pad_id).__name__}")
    return (ids != pad_id)[:, None, None, :]                                 # (B, 1, 1, T)


def causal_mask(q_len: int, k_len: int | None = None, device=None) -> torch.Tensor:
    """(1, 1, q_len, k_len) bool: query i may see key j when j <= i + (k_len - q_len).

    With k_len < q_len the first q_len - k_len queries see no key (fully masked rows)."""
    k_len = q_len if k_len is None else k_len
    for name, v in (("q_len", q_len), ("k_len", k_len)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ValueError(f"{name}: expected a non-negative int, got {v!r}")
    i = torch.arange(q_len, device=device)[:, None]                          # (Tq, 1)
    j = torch.arange(k_len, device=device)[None, :]                          # (1, Tk)
    return (j <= i + (k_len - q_len))[None, None]                            # (1, 1, Tq, Tk)


def combine_masks(*masks) -> torch.Tensor | None:
    """Logical AND of the given keep-masks with broadcasting; None entries are skipped, None if all
    are None. Numpy arrays and 0/1 integer masks are accepted."""
    out = None
    for n, m in enumerate(masks):
        if m is None:
            continue
        shape = tuple(m.shape) if hasattr(m, "shape") else tuple(torch.as_tensor(m).shape)
        m = check_mask(f"masks[{n}]", m, shape)                               # bool tensor
        if out is None:
            out = m
            continue
        try:
            torch.broadcast_shapes(tuple(out.shape), shape)
        except RuntimeError:
            raise ValueError(f"masks[{n}]: expected a shape that broadcasts with the masks before "
                             f"it, {tuple(out.shape)}, got {shape}") from None
        out = out & m.to(out.device)
    return out
