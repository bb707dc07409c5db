"""Multi-head attention in a model folder that takes its padding id from the project's data
module; correct, with a planted bug, and one that really uses the missing data package."""
import math

import torch
from torch import nn

from data.loader import PAD_ID, dt  # noqa: F401 - dt: the project's data package


class Attention(nn.Module):
    scaled = True

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.q, self.k, self.v, self.o = (nn.Linear(d_model, d_model) for _ in range(4))

    def prepare(self, x):
        return x

    def forward(self, query, key, value, mask=None):
        B, T, D = query.shape
        dk = D // self.h

        def heads(t):
            return t.view(B, -1, self.h, dk).transpose(1, 2)                      # (B, H, T, dk)
        s = heads(self.q(self.prepare(query))) @ heads(self.k(key)).transpose(-2, -1)
        s = s / math.sqrt(dk) if self.scaled else s
        if mask is not None:
            s = s.masked_fill(mask == PAD_ID, float("-inf"))
        return self.o((s.softmax(-1) @ heads(self.v(value))).transpose(1, 2).reshape(B, T, D))


class AttentionBUG(Attention):
    """BUG: the scores are never divided by sqrt(d_k)."""

    scaled = False


class AttentionUsingData(Attention):
    """Calls the missing package in its forward: RAISED, naming it."""

    def prepare(self, x):
        return dt.normalize(x)
