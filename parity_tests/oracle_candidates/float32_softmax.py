"""Attention that takes its softmax in float32 and casts back (as Hugging Face's eager attention
does), correct and with a planted bug (scores scaled by d_model instead of d_head)."""
from __future__ import annotations

import torch
from torch import nn


class Float32SoftmaxAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.heads, self.width = num_heads, d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def scale(self):
        return self.width ** -0.5

    def split(self, t):
        return t.view(t.shape[0], t.shape[1], self.heads, self.width).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        q = self.split(self.q_proj(query)) * self.scale()
        k, v = self.split(self.k_proj(key)), self.split(self.v_proj(value))
        scores = q @ k.transpose(-2, -1)
        if mask is not None:
            keep = mask if mask.dim() == 4 else mask.unsqueeze(1)
            scores = scores.masked_fill(keep == 0, -1e9)
        weights = torch.softmax(scores, dim=-1, dtype=torch.float32).to(q.dtype)
        out = (weights @ v).transpose(1, 2).reshape(query.shape[0], query.shape[1], -1)
        return self.out_proj(out)


class Float32SoftmaxAttentionWrongScale(Float32SoftmaxAttention):
    """BUG: scores scaled by 1/sqrt(d_model) instead of 1/sqrt(d_head)."""

    def scale(self):
        return (self.width * self.heads) ** -0.5
