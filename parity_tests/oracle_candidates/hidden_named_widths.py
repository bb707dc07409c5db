"""Layers whose constructor names its sizes as BERT's reference code does: `hidden` for the model
width beside `feed_forward_hidden` for the feed-forward width, and `attn_heads` for the head count.
A feed-forward taking `(d_model, hidden)` keeps `hidden` as its own width. Post-norm, the paper's.
Correct unless the docstring says BUG."""
import math

import torch
from torch import nn


class HeadsAttention(nn.Module):
    """Multi-head self-attention; `scale` is the divisor of the scores."""

    def __init__(self, hidden, attn_heads):
        super().__init__()
        self.heads, self.dk = attn_heads, hidden // attn_heads
        self.query, self.key, self.value = (nn.Linear(hidden, hidden) for _ in range(3))
        self.output = nn.Linear(hidden, hidden)

    def scale(self):
        return math.sqrt(self.dk)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        q, k, v = (lin(x).view(B, T, self.heads, self.dk).transpose(1, 2)
                   for lin in (self.query, self.key, self.value))
        scores = q @ k.transpose(-2, -1) / self.scale()               # (B, h, T, T)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        return self.output((torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(B, T, D))


class ModelWideScaleAttention(HeadsAttention):
    """BUG: scores scaled by sqrt(d_model) instead of sqrt(d_k)."""

    def scale(self):
        return math.sqrt(self.dk * self.heads)


class HiddenNamedEncoderLayer(nn.Module):
    attention_class = HeadsAttention

    def __init__(self, hidden, attn_heads, feed_forward_hidden, dropout=0.1):
        super().__init__()
        self.attention = self.attention_class(hidden, attn_heads)
        self.up, self.down = nn.Linear(hidden, feed_forward_hidden), nn.Linear(feed_forward_hidden, hidden)
        self.norm_a, self.norm_b = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.drop = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        x = self.norm_a(x + self.drop(self.attention(x, mask)))
        return self.norm_b(x + self.drop(self.down(torch.relu(self.up(x)))))


class HiddenNamedEncoderLayerBUG(HiddenNamedEncoderLayer):
    """BUG: its attention scales the scores by sqrt(d_model)."""

    attention_class = ModelWideScaleAttention


class HiddenWidthFeedForward(nn.Module):
    def __init__(self, d_model, hidden):
        super().__init__()
        self.up, self.down = nn.Linear(d_model, hidden), nn.Linear(hidden, d_model)

    def forward(self, x):
        return self.down(torch.relu(self.up(x)))
