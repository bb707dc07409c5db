"""Attention whose q|k|v projection is one packed matrix under a name the oracle's tables do not
hold. Our own code, in three writings: plain thirds in an nn.Linear, thirds grouped by head, and a
raw (d_model, 3*d_model) parameter used as x @ W. The BUG variants plant one mistake each."""
from __future__ import annotations

import math

import torch
from torch import nn


class JointProjectionAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.dk = num_heads, d_model // num_heads
        self.joint = nn.Linear(d_model, 3 * d_model)
        self.mix = nn.Linear(d_model, d_model)

    def split(self, t):
        B, T, _ = t.shape
        return t.view(B, T, self.h, self.dk).transpose(1, 2)

    def scale(self):
        return math.sqrt(self.dk)

    def forward(self, x, mask=None):
        q, k, v = (self.split(t) for t in self.joint(x).chunk(3, dim=-1))
        s = q @ k.transpose(-2, -1) / self.scale()
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        out = torch.softmax(s, dim=-1) @ v
        B, _, T, _ = out.shape
        return self.mix(out.transpose(1, 2).reshape(B, T, self.h * self.dk))


class JointProjectionAttentionBUG(JointProjectionAttention):
    def scale(self):
        return math.sqrt(self.h * self.dk)


class HeadGroupedJointAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.dk = num_heads, d_model // num_heads
        self.proj_in = nn.Linear(d_model, 3 * d_model)
        self.proj_back = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        packed = self.proj_in(x).reshape(B, T, self.h, 3 * self.dk).permute(0, 2, 1, 3)
        q, k, v = packed.chunk(3, dim=-1)
        s = q @ k.transpose(-2, -1) / math.sqrt(self.dk)
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        out = (torch.softmax(s, dim=-1) @ v).permute(0, 2, 1, 3).reshape(B, T, D)
        return self.proj_back(out)


class RawPackedAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.dk = num_heads, d_model // num_heads
        self.Wx = nn.Parameter(torch.randn(d_model, 3 * d_model) * 0.1)
        self.Wy = nn.Parameter(torch.randn(d_model, d_model) * 0.1)

    def softmax_axis(self):
        return -1

    def forward(self, x, mask=None):
        B, T, D = x.shape
        q, k, v = (x @ self.Wx).split(D, dim=-1)
        q, k, v = (t.view(B, T, self.h, self.dk).transpose(1, 2) for t in (q, k, v))
        s = q @ k.transpose(-2, -1) / math.sqrt(self.dk)
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        out = torch.softmax(s, dim=self.softmax_axis()) @ v
        return out.transpose(1, 2).reshape(B, T, D) @ self.Wy


class RawPackedAttentionBUG(RawPackedAttention):
    def softmax_axis(self):
        return -2


class HeadGroupedJointAttentionBUG(HeadGroupedJointAttention):
    def forward(self, x, mask=None):
        return super().forward(x, mask) * 1.0 + 1e-3 * x


class JointProjectionEncoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, eps=1e-5):
        super().__init__()
        self.attention = JointProjectionAttention(d_model, num_heads)
        self.ffn = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))
        self.norm1, self.norm2 = nn.LayerNorm(d_model, eps=eps), nn.LayerNorm(d_model, eps=eps)

    def forward(self, x, mask=None):
        x = self.norm1(x + self.attention(x, mask))
        return self.norm2(x + self.ffn(x))


class JointProjectionEncoderLayerBUG(JointProjectionEncoderLayer):
    def forward(self, x, mask=None):
        x = self.norm1(x + self.attention(x, mask))
        return self.norm2(self.ffn(x))
