"""Attention built causal unless told otherwise (`causal=True` by default, as a course's attention
for its language model is): the mask argument is (batch, 1, Tq, Tk), True where a key may be
attended, and the causal flag adds its own mask of later keys. Our own code in that style; the
wrong twin says BUG."""
from __future__ import annotations

import math

import torch
from torch import nn


class CausalByDefaultAttention(nn.Module):
    def __init__(self, d_model, num_heads, causal=True):
        super().__init__()
        self.h, self.dk, self.causal = num_heads, d_model // num_heads, causal
        self.wq, self.wk = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.wv, self.wo = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def _heads(self, t):
        B, T, _ = t.shape
        return t.reshape(B, T, self.h, self.dk).transpose(1, 2)       # (B, H, T, dk)

    def later_keys(self, tq, tk, device):
        """True where a key comes after its query: hidden when the attention is causal."""
        return torch.ones(tq, tk, dtype=torch.bool, device=device).triu(1)

    def forward(self, query, key, value, mask=None):
        q, k, v = self._heads(self.wq(query)), self._heads(self.wk(key)), self._heads(self.wv(value))
        s = q @ k.transpose(-1, -2) / math.sqrt(self.dk)              # (B, H, Tq, Tk)
        if self.causal:
            s = s.masked_fill(self.later_keys(s.shape[-2], s.shape[-1], s.device), float("-inf"))
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        y = torch.softmax(s, dim=-1) @ v
        B, _, Tq, _ = y.shape
        return self.wo(y.transpose(1, 2).reshape(B, Tq, self.h * self.dk))


class CausalByDefaultAttentionBUG(CausalByDefaultAttention):
    """BUG: the causal mask lets each query see the key right after it (triu(2), not triu(1))."""

    def later_keys(self, tq, tk, device):
        return torch.ones(tq, tk, dtype=torch.bool, device=device).triu(2)
