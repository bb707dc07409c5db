"""A sinusoidal positional module that takes token ids (B, T) and returns its table repeated along
the batch, (B, T, d) with every row the same, leaving the caller to add it to the embeddings.
A correct version and a twin whose docstring says BUG."""
from __future__ import annotations

import torch
from torch import nn


class ExpandedSinusoidTable(nn.Module):
    def __init__(self, max_len, d_model, base=10000.0):
        super().__init__()
        pos = torch.arange(max_len, dtype=torch.float64)[:, None]                         # (L, 1)
        rate = base ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)      # (D/2,)
        table = torch.zeros(max_len, d_model, dtype=torch.float64)
        table[:, 0::2], table[:, 1::2] = self.waves(pos * rate)
        self.register_buffer("table", table)

    def waves(self, angles):
        return torch.sin(angles), torch.cos(angles)

    def forward(self, ids):
        batch, length = ids.shape
        return self.table[:length].unsqueeze(0).expand(batch, -1, -1)                   # (B, T, D)


class ExpandedSinusoidTableSwapped(ExpandedSinusoidTable):
    """BUG: cosines on the even features and sines on the odd ones."""

    def waves(self, angles):
        return torch.cos(angles), torch.sin(angles)
