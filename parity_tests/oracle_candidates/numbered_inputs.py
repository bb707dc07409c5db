"""Cross-attention whose inputs are named by number: `forward(x1, x2, mask=None)`, x1 the queries
and x2 the keys and values (the same tensor). Right one matches; the BUG twin normalises its
scores over the queries."""
import math

import torch
from torch import nn


class NumberedInputsAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.dk = num_heads, d_model // num_heads
        self.wq, self.wk = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.wv, self.wo = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def split(self, t):
        return t.view(t.shape[0], t.shape[1], self.h, self.dk).transpose(1, 2)

    axis = -1

    def forward(self, x1, x2, mask=None):
        q, k, v = self.split(self.wq(x1)), self.split(self.wk(x2)), self.split(self.wv(x2))
        s = q @ k.transpose(-1, -2) / math.sqrt(self.dk)
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        z = torch.softmax(s, dim=self.axis) @ v
        return self.wo(z.transpose(1, 2).reshape(x1.shape[0], x1.shape[1], -1))


class NumberedInputsAttentionBUG(NumberedInputsAttention):
    """BUG: the softmax runs over the queries (dim=-2), not over the keys."""

    axis = -2
