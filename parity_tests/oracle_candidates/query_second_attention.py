"""Torch cross-attention whose forward takes the encoder's output first and the decoder's query
second, under names that say neither (`forward(x, y, mask)`): only the code says `y` is the query,
handed to the query projection while `x` goes to the packed key|value one. Test data for
parity_tests/test_oracle_query_second_attention.py; the BUG twin differs in one line."""
import math

import torch
from torch import nn


class MemoryFirstAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.heads, self.width = num_heads, d_model // num_heads
        self.q_layer = nn.Linear(d_model, d_model)
        self.kv_layer = nn.Linear(d_model, 2 * d_model)
        self.out_layer = nn.Linear(d_model, d_model)

    def _split(self, t):                        # (B, T, H*w) -> (B, H, T, w)
        return t.reshape(t.shape[0], t.shape[1], self.heads, -1).permute(0, 2, 1, 3)

    def _attend(self, q, k, v, mask):
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.width)    # (B, H, Tq, Tk)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        ctx = scores.softmax(-1) @ v                                 # (B, H, Tq, w)
        return self.out_layer(ctx.permute(0, 2, 1, 3).flatten(2))

    def forward(self, x, y, mask=None):
        q = self._split(self.q_layer(y))
        kv = self._split(self.kv_layer(x))                           # (B, H, Tk, 2w)
        k, v = kv.chunk(2, dim=-1)
        return self._attend(q, k, v, mask)


class MemoryFirstAttentionQueryValues(MemoryFirstAttention):
    """BUG: the values are read from the query's rows (the packed layer applied to `y` too)."""

    def forward(self, x, y, mask=None):
        q = self._split(self.q_layer(y))
        k = self._split(self.kv_layer(x)).chunk(2, dim=-1)[0]
        v = self._split(self.kv_layer(y)).chunk(2, dim=-1)[1]
        return self._attend(q, k, v, mask)
