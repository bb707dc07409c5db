"""Sizes named so that only their company tells them apart: `hidden_size` is each head's width in
a constructor that also takes `d_model` and the head count (its projections are d_model ->
num_heads * hidden_size), and a feed-forward written as two kernel-size-1 convolutions whose inner
width is `conv_hidden_dim`. Right ones match; the BUG twin does not (its bug is named in the
class)."""
import math

import torch
from torch import nn


class WidthPerHeadAttention(nn.Module):
    def __init__(self, hidden_size, num_heads, d_model):
        super().__init__()
        self.dh, self.h = hidden_size, num_heads
        inner = hidden_size * num_heads
        self.query, self.key, self.value = (nn.Linear(d_model, inner) for _ in range(3))
        self.out = nn.Linear(inner, d_model)

    def forward(self, q_in, k_in, v_in, mask=None):
        b = q_in.shape[0]
        split = lambda t: t.view(b, -1, self.h, self.dh).transpose(1, 2)   # noqa: E731
        q, k, v = split(self.query(q_in)), split(self.key(k_in)), split(self.value(v_in))
        s = q @ k.transpose(-1, -2) / math.sqrt(self.dh)
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        return self.out(self.merge(torch.softmax(s, dim=-1) @ v))

    def merge(self, z):
        b, h, t, dh = z.shape                              # (B, H, T, dh) -> (B, T, H * dh)
        return z.transpose(1, 2).reshape(b, t, h * dh)


class WidthPerHeadAttentionBUG(WidthPerHeadAttention):
    """BUG: the heads are merged without moving the head axis back (a reshape of (B, H, T, dh))."""

    def merge(self, z):
        b, h, t, dh = z.shape
        return z.reshape(b, t, h * dh)


class ConvFeedForwardEncoderLayer(nn.Module):
    """Post-norm encoder layer; its feed-forward is Conv1d(d, conv_hidden_dim, 1), ReLU, back."""

    def __init__(self, hidden_size, num_heads, d_model, conv_hidden_dim):
        super().__init__()
        self.mha = WidthPerHeadAttention(hidden_size, num_heads, d_model)
        self.conv1 = nn.Conv1d(d_model, conv_hidden_dim, 1)
        self.conv2 = nn.Conv1d(conv_hidden_dim, d_model, 1)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)

    def forward(self, x, mask=None):
        x = self.norm1(x + self.mha(x, x, x, mask))
        ff = self.conv2(torch.relu(self.conv1(x.transpose(1, 2)))).transpose(1, 2)
        return self.norm2(x + ff)


class HiddenPerHeadAttention(WidthPerHeadAttention):
    """The same attention as NumPy frameworks name its sizes: (d_model, n_heads, d_hidden), where
    `d_hidden` (elsewhere a feed-forward width) is each head's width."""

    def __init__(self, d_model, n_heads, d_hidden):
        super().__init__(d_hidden, n_heads, d_model)


class HiddenPerHeadAttentionBUG(HiddenPerHeadAttention, WidthPerHeadAttentionBUG):
    """BUG: as WidthPerHeadAttentionBUG, the heads merged without moving the head axis back."""
