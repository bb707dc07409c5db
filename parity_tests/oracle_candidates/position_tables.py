"""Positional modules whose forward takes token ids (B, T) and returns the sinusoid table (T, d) for
the caller to add. Each is correct unless its docstring says BUG.
"""
import numpy as np
import torch
import torch.nn as nn


class IdsPositionTable(nn.Module):
    """Table built once; forward(ids) unpacks (batch, seq_len) = ids.size() and slices it."""

    base = 10000.0

    def __init__(self, d_model, max_len, device):
        super().__init__()
        dtype = torch.get_default_dtype()   # the table in the module's dtype (no float32 constants)
        pos = torch.arange(0, max_len, device=device, dtype=dtype).unsqueeze(1)
        two_i = torch.arange(0, d_model, 2, device=device, dtype=dtype)
        table = torch.zeros(max_len, d_model, device=device, dtype=dtype)
        table[:, 0::2] = torch.sin(pos / self.base ** (two_i / d_model))
        table[:, 1::2] = torch.cos(pos / self.base ** (two_i / d_model))
        self.register_buffer("table", table, persistent=False)

    def forward(self, ids):
        batch, seq_len = ids.size()
        return self.table[:seq_len, :]


class IdsPositionTableWrongBase(IdsPositionTable):
    """BUG: frequencies from base 1000 instead of 10000."""

    base = 1000.0


class NumpyIdsPositionTable:
    """NumPy: forward(token_ids) returns the (T, d) table computed for that length."""

    def __init__(self, d_model, max_len=64):
        self.d = d_model

    def forward(self, token_ids):
        B, T = token_ids.shape
        pos = np.arange(T)[:, None]
        i = np.arange(self.d)[None, :]
        angle = pos / np.power(10000.0, (2 * (i // 2)) / self.d)
        return np.where(i % 2 == 0, np.sin(angle), self.shift(np.cos(angle)))

    def shift(self, c):
        return c


class NumpyIdsPositionTableSwapped(NumpyIdsPositionTable):
    """BUG: the odd columns get -cos."""

    def shift(self, c):
        return -c


class Float32PositionTable(nn.Module):
    """x + the sinusoid table, the table computed in float32 (`.float()`) whatever the module's
    dtype: right logic, float32 constants."""

    base = 10000.0

    def __init__(self, d_model, max_len=64):
        super().__init__()
        pos = torch.arange(0, max_len).float().unsqueeze(1)
        freq = torch.pow(self.base, -torch.arange(0, d_model, 2).float() / d_model)
        table = torch.zeros(max_len, d_model, dtype=torch.float)
        table[:, 0::2] = torch.sin(pos * freq)
        table[:, 1::2] = torch.cos(pos * freq)
        self.register_buffer("table", table)

    def forward(self, x):
        return x + self.table[: x.shape[1]].to(x.dtype)


class Float32PositionTableShifted(Float32PositionTable):
    """BUG: positions start at 1."""

    def forward(self, x):
        return x + self.table[1: x.shape[1] + 1].to(x.dtype)
