"""Positional modules whose forward takes the sequence length, not x, and returns the table for
positions offset .. offset + T - 1 (the caller adds it): `def forward(self, seq_len, offset=0)`.
Our own code, NumPy and torch; the BUG variants plant one mistake each."""
from __future__ import annotations

import numpy as np
import torch
from torch import nn


def sinusoid(length, width):
    pos = np.arange(length, dtype=np.float64)[:, None]
    rate = np.power(10000.0, -np.arange(0, width, 2, dtype=np.float64) / width)
    out = np.zeros((length, width))
    out[:, 0::2] = np.sin(pos * rate)
    out[:, 1::2] = np.cos(pos * rate)[:, : width // 2]
    return out


class LengthTable:
    """NumPy: a (max_len, d) table precomputed, sliced by the length asked for."""

    def __init__(self, max_seq_len: int, d_model: int):
        self.table = sinusoid(max_seq_len, d_model)

    def forward(self, seq_len: int, offset: int = 0) -> np.ndarray:
        return self.table[offset:offset + seq_len, :]


class LengthTableBUG(LengthTable):
    """BUG: positions start at 1, not 0."""

    def forward(self, seq_len: int, offset: int = 0) -> np.ndarray:
        return self.table[offset + 1:offset + 1 + seq_len, :]


class TorchLengthTable(nn.Module):
    """torch: a (1, max_len, d) buffer, sliced by the length asked for."""

    def __init__(self, d_model: int, max_len: int = 128):
        super().__init__()
        self.register_buffer("pe", torch.from_numpy(sinusoid(max_len, d_model))[None])

    def forward(self, length):
        return self.pe[:, :length]


class TorchLengthTableBUG(TorchLengthTable):
    """BUG: the sine and cosine columns swapped."""

    def forward(self, length):
        table = self.pe[:, :length]
        return torch.stack((table[..., 1::2], table[..., 0::2]), dim=-1).flatten(-2)
