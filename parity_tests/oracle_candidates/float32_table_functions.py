"""Positional table functions f(length, d_model) that return their sinusoid table in float32 (a
common `.astype(np.float32)` at the end), whatever dtype the check runs in. Our own code; the wrong
twin says BUG."""
from __future__ import annotations

import numpy as np


def sinusoid_table_float32(length, d_model, base=10000.0):
    angle = np.arange(length)[:, None] / base ** (np.arange(0, d_model, 2) / d_model)   # (L, ceil(D/2))
    table = np.empty((length, d_model))
    table[:, 0::2] = np.sin(angle)
    table[:, 1::2] = np.cos(angle[:, : d_model // 2])
    return table.astype(np.float32)                                                   # (L, D)


def sinusoid_table_float32_BUG(length, d_model):
    """BUG: base 1000 instead of 10000."""
    return sinusoid_table_float32(length, d_model, base=1000.0)
