"""Attention whose mask is 1 where a key is HIDDEN, applied through a comparison that selects its set
entries: a torch module filling `masked_fill(mask == 1, float("-1e9"))`. The twin whose docstring
says BUG has one planted mistake."""
from __future__ import annotations

import math

import torch
import torch.nn as nn


class ComparedMaskAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.d_k = num_heads, d_model // num_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)

    def scale(self):
        return math.sqrt(self.d_k)

    def split(self, x):
        b, n, _ = x.shape
        return x.view(b, n, self.h, self.d_k).transpose(1, 2)       # (B, H, T, d_k)

    def forward(self, query, key, value, mask=None):
        b, n, d = query.shape
        q, k, v = self.split(self.w_q(query)), self.split(self.w_k(key)), self.split(self.w_v(value))
        scores = q @ k.transpose(-2, -1) / self.scale()             # (B, H, Tq, Tk)
        if mask is not None:
            if mask.dim() == 3:
                mask = mask.unsqueeze(1)
            scores = scores.masked_fill(mask == 1, float("-1e9"))
        y = torch.softmax(scores, dim=-1) @ v
        return self.w_o(y.transpose(1, 2).reshape(b, n, d))


class ComparedMaskAttentionBUG(ComparedMaskAttention):
    """BUG: the scores are not scaled."""

    def scale(self):
        return 1.0
