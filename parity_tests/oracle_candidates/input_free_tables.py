"""Positional modules whose forward takes no input and returns the whole table, (1, L, d) or
(L, d), built for a fixed maximum length (the caller adds table[:, :T]). Our own code; the BUG
variants plant one mistake each."""
from __future__ import annotations

import torch
from torch import nn


class InputFreeTable(nn.Module):
    def __init__(self, d_model, max_len):
        super().__init__()
        self.d_model, self.max_len = d_model, max_len

    def base(self):
        return 10000.0

    def forward(self):
        pos = torch.arange(self.max_len, dtype=torch.float64)[:, None]
        freq = self.base() ** (-torch.arange(0, self.d_model, 2, dtype=torch.float64) / self.d_model)
        table = torch.zeros(self.max_len, self.d_model, dtype=torch.float64)
        table[:, 0::2] = torch.sin(pos * freq)
        table[:, 1::2] = torch.cos(pos * freq)[:, : self.d_model // 2]
        return table.unsqueeze(0)


class InputFreeTableBUG(InputFreeTable):
    def base(self):
        return 1000.0


class BufferedInputFreeTable(nn.Module):
    def __init__(self, d_model: int, max_len: int = 64):
        super().__init__()
        pos = torch.arange(max_len, dtype=torch.float64)[:, None]
        i = torch.arange(d_model, dtype=torch.float64)[None, :]
        angle = pos / torch.pow(10000.0, (2 * torch.div(i, 2, rounding_mode="floor")) / d_model)
        table = torch.where(i % 2 == 0, torch.sin(angle), torch.cos(angle))
        self.register_buffer("table", table)

    def forward(self):
        return self.table


class BufferedInputFreeTableBUG(BufferedInputFreeTable):
    def forward(self):
        return self.table.flip(-1)
