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
from __future__ import annotations

from functools import reduce

import numpy as np

from npformer.layers.validation import bool_mask, check_ids, check_mask, describe


def padding_mask(ids: np.ndarray, pad_id: int | None) -> np.ndarray | None:
    """(B, 1, 1, T) bool keep-mask, False at padding keys; None when pad_id is None (no padding)."""
    ids = check_ids("ids", ids, np.iinfo(np.int64).max)       # integer (B, T), non-negative
    if pad_id is None:
        return None
    if isinstance(pad_id, bool) or not isinstance(pad_id, (int, np.integer)):
        raise TypeError(f"pad_id: expected an int or None, got {type(pad_id).__name__}")
    return (ids != pad_id)[:, None, None, :]                  # (B, 1, 1, T)


def _check_length(name: str, n) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"{name}: expected a non-negative int, got {n!r}")
    return int(n)


def causal_mask(q_len: int, k_len: int | None = None) -> np.ndarray:
    """(1, 1, q_len, k_len) bool, bottom-right aligned: query i may see key j iff j <= i + k_len - q_len.

    k_len defaults to q_len. With k_len < q_len the first q_len - k_len queries see no key at all
    (fully masked rows: attention gives them zeros).
    """
    q_len = _check_length("q_len", q_len)
    k_len = q_len if k_len is None else _check_length("k_len", k_len)
    i = np.arange(q_len)[:, None]                             # (Tq, 1) query positions
    j = np.arange(k_len)[None, :]                             # (1, Tk) key positions
    return (j <= i + (k_len - q_len))[None, None]             # (1, 1, Tq, Tk)


def combine_masks(*masks) -> np.ndarray | None:
    """Logical AND of keep-masks (bool, or 0/1 integers) with broadcasting; None entries are skipped,
    None when every entry is None."""
    given = []
    for i, m in enumerate(masks):
        if m is None:
            continue
        if not isinstance(m, np.ndarray):
            raise TypeError(f"masks[{i}]: expected a numpy array or None, got {describe(m)}")
        given.append(bool_mask(f"masks[{i}]", m))
    if not given:
        return None
    try:
        np.broadcast_shapes(*(m.shape for m in given))
    except ValueError:
        raise ValueError(f"masks: expected shapes that broadcast together, got "
                         f"{[m.shape for m in given]}") from None
    return reduce(np.logical_and, given, np.True_)            # broadcast shape, bool, a new array


# ---------------------------------------------------------------------------------------------------
# model-level mask arguments: no shape that can be misread
# ---------------------------------------------------------------------------------------------------
def _shape_of(mask) -> tuple:
    return tuple(np.shape(mask)) if not hasattr(mask, "shape") else tuple(mask.shape)


def check_model_mask(name: str, mask, target, keep_arg: str):
    """A model's attention-mask argument: 4-D (batch, heads, q_len, k_len) with size-1 axes
    broadcasting, or 2-D (q_len, k_len) shared by the batch. Refused, naming `name`:

    - rank 1 or 3 (which axes? (batch, k) or (heads, q, k) cannot be told apart);
    - a 2-D mask whose first axis is the batch size (> 1): a torch-style (batch, k_len) key-padding
      mask would otherwise be read as (q_len, k_len) whenever batch == q_len; such masks go in
      `keep_arg` (a (batch, k_len) keep-mask), or are written 4-D as mask[:, None, None, :].
    Returns the mask checked by validation.check_mask (bool, not broadcast), or None.
    """
    if mask is None:
        return None
    shape = _shape_of(mask)
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
    return check_mask(name, mask, target)


def as_key_mask(keep: np.ndarray | None) -> np.ndarray | None:
    """A (batch, k_len) (or already (batch, 1, 1, k_len)) bool key keep-mask as (batch, 1, 1, k_len)."""
    return None if keep is None else keep.reshape(keep.shape[0], 1, 1, keep.shape[-1])


def key_keep_mask(name: str, keep, batch: int, k_len: int) -> np.ndarray | None:
    """A (batch, k_len) key keep-mask (True / 1 = a real token that may be attended to; the NEGATION
    of torch's key_padding_mask) as a (batch, 1, 1, k_len) attention keep-mask; None stays None."""
    if keep is None:
        return None
    shape = _shape_of(keep)
    if shape != (batch, k_len):
        raise ValueError(f"{name}: expected a (batch, k_len) = ({batch}, {k_len}) key keep-mask "
                         f"(True = real token), got shape {shape}")
    return check_mask(name, keep, (batch, k_len))[:, None, None, :]          # (B, 1, 1, K)
