"""A NumPy positional encoding computing its sinusoid table once in the constructor (kept as
`self.pe`, (1, max_len, d_model), float64) and adding its first T rows in forward: a table the
code computes, not a learned one. The twin whose docstring says BUG has one planted mistake."""
from __future__ import annotations

import math

import numpy as np


class ComputedTableEncoding:
    BASE = 10000.0

    def __init__(self, d_model, max_len=100):
        pe = np.zeros((max_len, d_model))
        position = np.arange(max_len).reshape(-1, 1)
        div_term = np.exp(np.arange(0, d_model, 2) * (-math.log(self.BASE) / d_model))
        pe[:, 0::2] = np.sin(position * div_term)
        pe[:, 1::2] = np.cos(position * div_term)[:, : d_model // 2]
        self.pe = pe[np.newaxis, :, :]

    def forward(self, x):
        return x + self.pe[:, : x.shape[1], :]


class ComputedTableEncodingBUG(ComputedTableEncoding):
    """BUG: the frequencies use base 1000 instead of 10000."""

    BASE = 1000.0
