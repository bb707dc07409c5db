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


class StaticTableEncoding:
    """No constructor of its own: the table is computed in a static forward from the input's
    sizes (a class used as a namespace, `StaticTableEncoding.forward(x)`)."""

    BASE = 10000.0

    @staticmethod
    def table(length, width, base):
        position = np.arange(length).reshape(-1, 1)
        rate = np.exp(np.arange(0, width, 2) * (-math.log(base) / width))
        pe = np.zeros((length, width))
        pe[:, 0::2], pe[:, 1::2] = np.sin(position * rate), np.cos(position * rate)[:, : width // 2]
        return pe

    @classmethod
    def forward(cls, x):
        return x + cls.table(x.shape[1], x.shape[2], cls.BASE)[np.newaxis]


class StaticTableEncodingBUG(StaticTableEncoding):
    """BUG: the frequencies use base 1000 instead of 10000."""

    BASE = 1000.0
