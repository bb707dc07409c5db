"""Position-wise feed-forward, torch. Our own code, a sibling file of encoder_layer.py."""
from __future__ import annotations

from torch import nn


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.1):
        super().__init__()
        self.w_1, self.w_2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        return self.w_2(self.drop(self.w_1(x).relu()))
