"""Attention built from a list of single heads whose constructor names each head's width
`d_hidden` beside `d_model` and the head count (a word other code uses for the feed-forward width),
and an encoder layer taking `d_hidden` as well as its feed-forward width `d_ff`. Right ones match;
the BUG twin divides its scores by sqrt(d_model) instead of sqrt(d_hidden)."""
import math

import torch
from torch import nn


class OneHead(nn.Module):
    def __init__(self, d_model, d_hidden, scale):
        super().__init__()
        self.q = nn.Linear(d_model, d_hidden, bias=False)
        self.k = nn.Linear(d_model, d_hidden, bias=False)
        self.v = nn.Linear(d_model, d_hidden, bias=False)
        self.scale = scale

    def forward(self, x):
        s = self.q(x) @ self.k(x).transpose(-1, -2) / self.scale
        return torch.softmax(s, dim=-1) @ self.v(x)


class HeadListAttention(nn.Module):
    def __init__(self, n_heads, d_model, d_hidden):
        super().__init__()
        self.heads = nn.ModuleList(OneHead(d_model, d_hidden, self.scale_for(d_model, d_hidden))
                                   for _ in range(n_heads))
        self.proj = nn.Linear(n_heads * d_hidden, d_model, bias=False)

    @staticmethod
    def scale_for(d_model, d_hidden):
        return math.sqrt(d_hidden)

    def forward(self, x):
        return self.proj(torch.cat([h(x) for h in self.heads], dim=-1))


class HeadListAttentionBUG(HeadListAttention):
    """BUG: scores divided by sqrt(d_model), not by the head's width."""

    @staticmethod
    def scale_for(d_model, d_hidden):
        return math.sqrt(d_model)


class HeadListEncoderLayer(nn.Module):
    """Post-norm layer around HeadListAttention; `d_ff` is the feed-forward's own width."""

    attention = HeadListAttention

    def __init__(self, n_heads, d_model, d_hidden, d_ff):
        super().__init__()
        self.attn = self.attention(n_heads, d_model, d_hidden)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))

    def forward(self, x):
        x = self.norm1(x + self.attn(x))
        return self.norm2(x + self.ff(x))


class HeadListEncoderLayerBUG(HeadListEncoderLayer):
    """BUG: its attention divides the scores by sqrt(d_model)."""

    attention = HeadListAttentionBUG
