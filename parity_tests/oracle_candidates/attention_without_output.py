"""Self-attention that stops at the merged heads: q, k, v projections and no output projection
(the projection lives in the next module, as in BERT-family `...SelfAttention` classes); our own
code in that style. Wrong twins say BUG."""
from __future__ import annotations

import math

import torch
from torch import nn


class MergedHeadsSelfAttention(nn.Module):
    """softmax(q k^T / sqrt(d_head)) v per head, heads concatenated; returns (context, weights)."""

    def __init__(self, hidden, n_heads):
        super().__init__()
        self.n_heads, self.d_head = n_heads, hidden // n_heads
        self.query, self.key, self.value = (nn.Linear(hidden, hidden) for _ in range(3))

    def heads(self, t):
        B, T, _ = t.shape
        return t.view(B, T, self.n_heads, self.d_head).transpose(1, 2)

    def merge(self, ctx):
        B, _, T, _ = ctx.shape
        return ctx.transpose(1, 2).reshape(B, T, self.n_heads * self.d_head)

    def forward(self, hidden_states, attention_mask=None):
        q, k, v = self.heads(self.query(hidden_states)), self.heads(self.key(hidden_states)), \
            self.heads(self.value(hidden_states))
        s = q @ k.transpose(-1, -2) / math.sqrt(self.d_head)
        if attention_mask is not None:
            s = s.masked_fill(attention_mask == 0, float("-inf"))
        w = torch.softmax(s, dim=-1)
        return self.merge(w @ v), w


class MergedHeadsSelfAttentionNoTranspose(MergedHeadsSelfAttention):
    """BUG: the heads are merged without moving the head axis back next to the features."""

    def merge(self, ctx):
        B, _, T, _ = ctx.shape
        return ctx.reshape(B, T, self.n_heads * self.d_head)


class MergedHeadsSelfAttentionWithSpareMatrix(MergedHeadsSelfAttention):
    """BUG: builds an output projection and never applies it (so it is not absent: the oracle
    places it as out_proj, and the output differs)."""

    def __init__(self, hidden, n_heads):
        super().__init__(hidden, n_heads)
        self.dense = nn.Linear(hidden, hidden)
