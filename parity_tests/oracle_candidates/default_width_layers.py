"""Layers that take no feed-forward width: the feed-forward they build keeps its own default hidden
width (a constant, not a multiple of the model width), and a feed-forward whose hidden width is a
constant of its code. Our own code in that style; the wrong twins say BUG."""
from __future__ import annotations

import math

import torch
from torch import nn


class Attention(nn.Module):
    """Multi-head attention, separate q, k, v and output projections with biases."""

    def __init__(self, heads, d_model):
        super().__init__()
        self.h, self.dk = heads, d_model // heads
        self.q, self.k, self.v, self.o = (nn.Linear(d_model, d_model) for _ in range(4))

    def forward(self, q, k, v, mask=None):
        B = q.shape[0]

        def heads(t):
            return t.view(B, -1, self.h, self.dk).transpose(1, 2)

        s = heads(self.q(q)) @ heads(self.k(k)).transpose(-2, -1) / math.sqrt(self.dk)
        if mask is not None:
            s = s.masked_fill(mask == 0, -1e9)
        y = torch.softmax(s, dim=-1) @ heads(self.v(v))
        return self.o(y.transpose(1, 2).reshape(B, -1, self.h * self.dk))


class WideFeedForward(nn.Module):
    """Two linear layers around a ReLU; the hidden width defaults to a constant."""

    def __init__(self, d_model, d_ff=40, dropout=0.1):
        super().__init__()
        self.l1, self.l2, self.drop = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model), nn.Dropout(dropout)

    def forward(self, x):
        return self.l2(self.drop(torch.relu(self.l1(x))))


class ConstantWidthFeedForward(nn.Module):
    """A feed-forward taking only the model width: its hidden width is a constant of its code."""

    def __init__(self, d_model):
        super().__init__()
        self.up, self.down = nn.Linear(d_model, 24), nn.Linear(24, d_model)

    def forward(self, x):
        return self.down(torch.relu(self.up(x)))


class DefaultWidthEncoderLayer(nn.Module):
    """Post-norm encoder layer whose feed-forward keeps its default width (no d_ff argument)."""

    def __init__(self, d_model, heads, dropout=0.1):
        super().__init__()
        self.attn, self.ff = Attention(heads, d_model), WideFeedForward(d_model, dropout=dropout)
        self.n1, self.n2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)

    def forward(self, x, mask):
        x = self.n1(x + self.attn(x, x, x, mask))
        return self.n2(x + self.ff(x))


class DefaultWidthEncoderLayerBUG(DefaultWidthEncoderLayer):
    """BUG: the feed-forward's residual is missing."""

    def forward(self, x, mask):
        x = self.n1(x + self.attn(x, x, x, mask))
        return self.n2(self.ff(x))


class DefaultWidthDecoderLayer(nn.Module):
    """Post-norm decoder layer, its feed-forward at the default width."""

    def __init__(self, d_model, heads, dropout=0.1):
        super().__init__()
        self.self_attn, self.cross = Attention(heads, d_model), Attention(heads, d_model)
        self.ff = WideFeedForward(d_model, dropout=dropout)
        self.n1, self.n2, self.n3 = (nn.LayerNorm(d_model) for _ in range(3))

    def forward(self, x, memory, src_mask, tgt_mask):
        x = self.n1(x + self.self_attn(x, x, x, tgt_mask))
        x = self.n2(x + self.cross(x, memory, memory, src_mask))
        return self.n3(x + self.ff(x))


class DefaultWidthDecoderLayerBUG(DefaultWidthDecoderLayer):
    """BUG: the cross-attention's residual is missing."""

    def forward(self, x, memory, src_mask, tgt_mask):
        x = self.n1(x + self.self_attn(x, x, x, tgt_mask))
        x = self.n2(self.cross(x, memory, memory, src_mask))
        return self.n3(x + self.ff(x))


class ConstantWidthFeedForwardBUG(ConstantWidthFeedForward):
    """BUG: no activation."""

    def forward(self, x):
        return self.down(self.up(x))
