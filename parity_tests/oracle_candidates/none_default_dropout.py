"""A torch attention whose dropout rate defaults to None but is handed to nn.Dropout all the same
(nn.Dropout(None) raises, so the author always passes a number), beside an optional dropout MODULE
defaulting to None (kept None). The right class has a planted-bug twin (BUG)."""
import math

import torch
from torch import nn


class RateNoneAttention(nn.Module):
    def __init__(self, width, heads, rate: float = None, extra_drop: nn.Module = None):
        super().__init__()
        self.heads, self.hd = heads, width // heads
        self.to_q = nn.Linear(width, width)
        self.to_k = nn.Linear(width, width)
        self.to_v = nn.Linear(width, width)
        self.to_out = nn.Linear(width, width)
        self.drop = nn.Dropout(rate)
        self.extra = extra_drop if extra_drop is not None else nn.Identity()

    def split(self, t):
        return t.view(t.shape[0], t.shape[1], self.heads, self.hd).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        q, k, v = self.split(self.to_q(query)), self.split(self.to_k(key)), self.split(self.to_v(value))
        s = q @ k.transpose(-1, -2) / math.sqrt(self.hd)
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        a = self.extra(self.drop(torch.softmax(s, -1)))
        o = (a @ v).transpose(1, 2).reshape(query.shape[0], query.shape[1], -1)
        return self.to_out(o)


class RateNoneAttentionBUG(RateNoneAttention):
    def split(self, t):
        return t.view(t.shape[0], t.shape[1], self.hd, self.heads).transpose(1, 3).transpose(2, 3)
