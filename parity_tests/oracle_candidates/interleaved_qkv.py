"""Attention with one packed q|k|v projection whose rows are grouped by head: `qkv(x)` reshaped to
(B, T, H, 3 * d_k) and then chunked, so head h's query, key and value are rows h*3*d_k onwards, not
the q | k | v thirds. Our own code in that style; the wrong twins say BUG."""
from __future__ import annotations

import math

import torch
from torch import nn


class HeadGroupedAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.dk = num_heads, d_model // num_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)

    def _split(self, x):
        B, T, _ = x.shape
        return self.qkv(x).reshape(B, T, self.h, 3 * self.dk).permute(0, 2, 1, 3).chunk(3, dim=-1)

    def _attend(self, q, k, v, mask):
        s = q @ k.transpose(-1, -2) / math.sqrt(self.dk)
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        return torch.softmax(s, dim=-1) @ v

    def forward(self, x, mask=None):
        B, T, _ = x.shape
        q, k, v = self._split(x)
        y = self._attend(q, k, v, mask)
        return self.out(y.permute(0, 2, 1, 3).reshape(B, T, self.h * self.dk))


class HeadGroupedAttentionBUG(HeadGroupedAttention):
    """BUG: query and key swapped when the packed rows are chunked."""

    def forward(self, x, mask=None):
        B, T, _ = x.shape
        k, q, v = self._split(x)
        y = self._attend(q, k, v, mask)
        return self.out(y.permute(0, 2, 1, 3).reshape(B, T, self.h * self.dk))


class HeadGroupedEncoderLayer(nn.Module):
    """Post-norm encoder layer around that attention."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.attn = HeadGroupedAttention(d_model, num_heads)
        self.ff1, self.ff2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)

    def forward(self, x, mask=None):
        x = self.ln1(x + self.attn(x, mask))
        return self.ln2(x + self.ff2(torch.relu(self.ff1(x))))


class HeadGroupedEncoderLayerBUG(HeadGroupedEncoderLayer):
    """BUG: the attention's value rows read as its keys (v, k swapped)."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__(d_model, num_heads, d_ff)
        self.attn = HeadGroupedAttentionValueKeyBUG(d_model, num_heads)


class HeadGroupedAttentionValueKeyBUG(HeadGroupedAttention):
    def forward(self, x, mask=None):
        B, T, _ = x.shape
        q, v, k = self._split(x)
        y = self._attend(q, k, v, mask)
        return self.out(y.permute(0, 2, 1, 3).reshape(B, T, self.h * self.dk))
