"""Recogniser: length-style masks. A forward argument named `valid_lens` (`lengths`, `seq_lens`,
`src_len`, ...) takes, for each sequence, the number of keys it may attend to: shape (B,) (or
(B*H,) for a (batch*heads, T, d) sdpa), as d2l's masked_softmax. Only key-padding masks can be said
this way: draws are limited to no mask and padding (causal draws skipped, and the report says so)."""
from __future__ import annotations

import numpy as np

from ..signatures import InterfaceError

NAMES = ("valid_lens", "valid_len", "valid_length", "valid_lengths", "lengths", "lens", "seq_lens",
         "seq_len", "src_len", "src_lens", "key_lengths", "key_lens", "x_lens", "input_lengths",
         "sequence_lengths", "seq_lengths", "src_lengths", "enc_valid_lens", "dec_valid_lens")
KINDS = ("none", "padding")


def detect(binding, comp) -> dict:
    """{mask source: per_query (False: shape (B,))} for masks bound to a length-style argument."""
    out = {}
    for m in comp.masks:
        arg = binding.arg_of.get(m.name)
        if arg is not None and arg.lower() in NAMES:
            out[m.name] = False
    return out


def from_keep(keep, name: str, per_query: bool = False, heads: int = 0):
    """Keep mask (B, 1, Tq, Tk) of a key-padding draw -> valid lengths (B,) int64 (None: no mask)."""
    if keep is None:
        return None
    k = np.asarray(keep, dtype=bool)
    rows = k[:, 0, 0, :]                                            # (B, Tk)
    lens = rows.sum(axis=-1)                                        # (B,)
    prefix = np.arange(rows.shape[-1])[None, :] < lens[:, None]     # (B, Tk)
    if not (np.array_equal(rows, prefix) and (k == rows[:, None, None, :]).all()):
        raise InterfaceError(f"{name}: a length-style argument can only express key padding at the "
                             f"end of each sequence; this draw is another mask")
    if heads:
        lens = np.repeat(lens, heads)                               # (B*H,)
    return lens.astype(np.int64)
