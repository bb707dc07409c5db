"""Recogniser: a positional module that takes token ids and returns its table repeated along the
batch, (B, T, d) with every row the same (`pe[:T].unsqueeze(0).expand(B, -1, -1)`, expanded
"to avoid surprises during broadcasting"), rather than (T, d) or (1, T, d). Called with token ids
(pe_table), such an output is the table, not x + PE: x never reached the module. Only the ids path
reads it so: handed x, a (B, T, d) output is what every x + PE module returns."""
from __future__ import annotations

import numpy as np


def repeated_table(value, ops, batch: int, d_model: int) -> bool:
    """Whether `value` is (batch, T, d_model) with every batch row equal (batch of at least 2)."""
    shape = tuple(getattr(value, "shape", ()))
    if len(shape) != 3 or shape[0] != batch or batch < 2 or shape[2] != d_model:
        return False
    try:
        a = np.asarray(ops.to_np(value))
    except Exception:  # noqa: BLE001 - not an array the framework reads: no table
        return False
    return bool(np.all(a == a[:1]))


def add_rows(table, x, out_shape):
    """x + table for a (B, T', d) table repeated along the batch, cut to x's T; None if not one."""
    B, T, D = out_shape
    shape = tuple(table.shape)
    if len(shape) != 3 or shape[0] != B or shape[2] != D or shape[1] < T:
        return None
    return x + table[:, :T]
