"""Attention keep-masks (True = this query may attend to this key), twin of npformer.layers.masks.

    padding_mask(ids (B, T), pad_id) -> (B, 1, 1, T)   keys that are not padding
    causal_mask(q_len, k_len=None)   -> (1, 1, q_len, k_len)   j <= i + (k_len - q_len)
    combine_masks(*masks)            -> logical AND with broadcasting (None skipped)

The causal mask is bottom-right aligned (query i is the (k_len - q_len + i)-th position), which is what
a KV cache needs; it equals SDPA's top-left `is_causal` only when q_len == k_len.
"""
from __future__ import annotations

import torch

from torchformer.layers.validation import check_ids, check_mask


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


# ---------------------------------------------------------------------------------------------------
# model-level mask arguments: no shape that can be misread (the same rules and messages as npformer)
# ---------------------------------------------------------------------------------------------------
def check_model_mask(name: str, mask, target, keep_arg: str, device=None):
    """A model's attention-mask argument (see npformer.layers.masks.check_model_mask): 4-D (batch, heads,
    q_len, k_len) or 2-D (q_len, k_len); rank 1 or 3, and a 2-D mask whose first axis is the batch
    size (> 1), are refused as ambiguous."""
    if mask is None:
        return None
    shape = tuple(mask.shape) if hasattr(mask, "shape") else tuple(torch.as_tensor(mask).shape)
    B = target[0]
    if len(shape) not in (2, 4):
        raise ValueError(f"{name}: expected a 4-D (batch, heads, q_len, k_len) keep-mask (size-1 "
                         f"axes broadcast) or a 2-D (q_len, k_len) one, got shape {shape}; a "
                         f"(batch, k_len) key-padding keep-mask goes in {keep_arg}")
    if len(shape) == 2 and B > 1 and shape[0] == B:
        raise ValueError(f"{name}: a 2-D mask is read as (q_len, k_len), but shape {shape} starts "
                         f"with the batch size {B}, so it could be a (batch, k_len) key-padding "
                         f"mask: ambiguous. Pass key padding as {keep_arg} (True = a real token) "
                         f"or a 4-D mask (batch, heads, q_len, k_len)")
    return check_mask(name, mask, target, device=device)


def key_keep_mask(name: str, keep, batch: int, k_len: int, device=None):
    """A (batch, k_len) key keep-mask (True = real token; the negation of torch's key_padding_mask)
    as a (batch, 1, 1, k_len) attention keep-mask; None stays None."""
    if keep is None:
        return None
    shape = tuple(keep.shape) if hasattr(keep, "shape") else tuple(torch.as_tensor(keep).shape)
    if shape != (batch, k_len):
        raise ValueError(f"{name}: expected a (batch, k_len) = ({batch}, {k_len}) key keep-mask "
                         f"(True = real token), got shape {shape}")
    return check_mask(name, keep, (batch, k_len), device=device)[:, None, None, :]
