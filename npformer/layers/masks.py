"""Attention keep-masks: True = this query MAY attend to this key (the paper's sense, SDPA's sense).

All masks broadcast to (batch, heads, q_len, k_len):

    padding_mask(ids, pad_id)   (B, 1, 1, T)      key j of sequence b is kept when ids[b, j] != pad_id
    causal_mask(q_len, k_len)   (1, 1, Tq, Tk)    query i sees key j when j <= i + (Tk - Tq)
    combine_masks(*masks)       logical AND with broadcasting

The causal mask is bottom-right aligned: the last query lines up with the last key. With Tq == Tk it
is the usual lower triangle; with a KV cache (Tk = past + Tq new tokens) each new token sees all the
past and the new tokens up to itself. (torch's SDPA `is_causal` is top-left aligned; the two agree
only when Tq == Tk.)
"""
from functools import reduce

import numpy as np


def padding_mask(ids: np.ndarray, pad_id: int | None) -> np.ndarray | None:
    """(B, 1, 1, T) bool keep-mask, False at padding keys; None when pad_id is None (no padding)."""
    if pad_id is None:
        return None
    return (ids != pad_id)[:, None, None, :]                  # (B, 1, 1, T)


def causal_mask(q_len: int, k_len: int | None = None) -> np.ndarray:
    """(1, 1, q_len, k_len) bool (k_len defaults to q_len), bottom-right aligned as above. With k_len
    < q_len the first q_len - k_len queries see no key at all (fully masked rows: attention gives them zeros)."""
    k_len = q_len if k_len is None else k_len
    i = np.arange(q_len)[:, None]                             # (Tq, 1) query positions
    j = np.arange(k_len)[None, :]                             # (1, Tk) key positions
    return (j <= i + (k_len - q_len))[None, None]             # (1, 1, Tq, Tk)


def combine_masks(*masks) -> np.ndarray | None:
    """Logical AND of bool keep-masks with broadcasting; None entries are skipped, None when every
    entry is None."""
    given = [m for m in masks if m is not None]
    return reduce(np.logical_and, given, np.True_) if given else None   # broadcast shape, bool


def as_key_mask(keep: np.ndarray | None) -> np.ndarray | None:
    """A (batch, k_len) (or already (batch, 1, 1, k_len)) bool key keep-mask as (batch, 1, 1, k_len)."""
    return None if keep is None else keep.reshape(keep.shape[0], 1, 1, keep.shape[-1])
