"""Cross-attention whose key and value projections are ONE (2*d_model, d_model) Linear, `self.kv`,
split with chunk(2, -1) (keys first, the usual writing; values first in `ValueFirst...`), the query
projection a Linear of its own, and key and value taken as one argument (`forward(x, kv, mask)`).
Right unless BUG."""
import math

import torch
from torch import nn


class PackedKeyValueAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.d_k = num_heads, d_model // num_heads
        self.q = nn.Linear(d_model, d_model)
        self.kv = nn.Linear(d_model, 2 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def heads(self, t):
        return t.view(t.shape[0], t.shape[1], self.h, self.d_k).transpose(1, 2)

    def split(self, x, kv):
        k, v = self.kv(kv).chunk(2, dim=-1)
        return self.heads(self.q(x)), self.heads(k), self.heads(v)

    def forward(self, x, kv, mask=None):
        q, k, v = self.split(x, kv)
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        o = torch.softmax(s, dim=-1) @ v
        return self.proj(o.transpose(1, 2).reshape(x.shape[0], x.shape[1], -1))


class ValueFirstPackedKeyValueAttention(PackedKeyValueAttention):
    """The same computation with the packed rows written values first: v, k = chunk(2)."""

    def split(self, x, kv):
        v, k = self.kv(kv).chunk(2, dim=-1)
        return self.heads(self.q(x)), self.heads(k), self.heads(v)


class PackedKeyValueAttentionBUG(PackedKeyValueAttention):
    """BUG: both the keys and the values are read from the key half of the packed projection."""

    def split(self, x, kv):
        k = self.kv(kv).chunk(2, dim=-1)[0]
        return self.heads(self.q(x)), self.heads(k), self.heads(k)
