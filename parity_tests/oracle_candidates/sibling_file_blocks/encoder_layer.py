"""A post-norm encoder layer, torch, handed its attention and feed-forward as built blocks
(`EncoderLayer(self_attn, feed_forward, size, dropout)`, the blocks first); their classes live in
the sibling files attention.py and feed_forward.py, which this file does not import (a model file
would build them). Our own code; the BUG variant drops the feed-forward's residual."""
from __future__ import annotations

from torch import nn


class EncoderLayer(nn.Module):
    def __init__(self, self_attn, feed_forward, size, dropout):
        super().__init__()
        self.self_attn, self.feed_forward = self_attn, feed_forward
        self.norms = nn.ModuleList(nn.LayerNorm(size) for _ in range(2))
        self.drop = nn.Dropout(dropout)

    def residual(self, x, y):
        return x + y

    def forward(self, x, mask):
        x = self.norms[0](x + self.drop(self.self_attn(x, x, x, mask)))
        return self.norms[1](self.residual(x, self.drop(self.feed_forward(x))))


class EncoderLayer_BUG(EncoderLayer):
    def residual(self, x, y):
        return y
