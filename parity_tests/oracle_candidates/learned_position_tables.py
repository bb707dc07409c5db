"""Positional modules holding a learned table instead of computing the sinusoid: an nn.Embedding
looked up with the positions 0 .. T-1, and a (1, max_len, d) nn.Parameter sliced to T. Our own
code; each BUG variant plants one mistake in the lookup or the addition, and `TableWithProjection`
has a parameter besides its table (not a positional table alone)."""
from __future__ import annotations

import numpy as np
import torch
from torch import nn


class EmbeddingPositions(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.table = nn.Embedding(max_len, d_model)

    def positions(self, t, device):
        return torch.arange(t, device=device)

    def forward(self, x):
        return x + self.table(self.positions(x.shape[1], x.device))[None]


class EmbeddingPositionsBUG(EmbeddingPositions):
    def positions(self, t, device):
        return torch.arange(1, t + 1, device=device)       # one position late


class ParameterPositions(nn.Module):
    def __init__(self, d_model, max_len=64):
        super().__init__()
        self.pos = nn.Parameter(torch.randn(1, max_len, d_model) * 0.02)

    def forward(self, x):
        return x + self.pos[:, : x.size(1)]


class ParameterPositionsBUG(ParameterPositions):
    def forward(self, x):
        return x * self.pos[:, : x.size(1)]                # multiplied, not added


class TableWithProjection(EmbeddingPositions):
    def __init__(self, max_len, d_model):
        super().__init__(max_len, d_model)
        self.mix = nn.Linear(d_model, d_model)

    def forward(self, x):
        return self.mix(super().forward(x))


class NumpyLearnedPositions:
    """NumPy: a learned (max_len, d_model) table added to x; forward keeps its input for backward."""

    def __init__(self, max_len, d_model):
        self.W = np.random.default_rng(0).standard_normal((max_len, d_model)) * 0.02
        self.dW = None

    def forward(self, x):
        self.x = x
        return x + self.W[: x.shape[1]]

    def backward(self, dout):
        self.dW = np.zeros_like(self.W)
        self.dW[: dout.shape[1]] = dout.sum(axis=0)
        return dout
