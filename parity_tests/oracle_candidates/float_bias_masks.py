"""Encoder layers whose attention handles its mask only as a float bias added to the scores: a
boolean mask goes through a conversion written for (B, 1, 1, Tk) padding masks, which raises for a
(B, 1, Tq, Tk) one, while a 3-axis boolean mask would be silently added as 0 / 1. Our own code;
`FloatBiasLayerBUG` plants a wrong scale, `FloatBiasIgnoredLayer` drops its float mask (a float
mask that hides nothing must not be taken for the layer's convention)."""
from __future__ import annotations

import math

import torch
from torch import nn


class FloatBiasAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.dk = num_heads, d_model // num_heads
        self.q, self.k, self.v, self.o = (nn.Linear(d_model, d_model) for _ in range(4))

    def bias(self, mask, b, tk, dtype):
        if mask is None:
            return None
        if mask.dtype == torch.bool:
            out = torch.zeros(b, 1, 1, tk, dtype=dtype)
            out.masked_fill_(~mask, float("-inf"))       # in place: only a (B, 1, 1, Tk) mask fits
            return out
        return mask.to(dtype)

    def scale(self):
        return math.sqrt(self.dk)

    def forward(self, x, mask=None):
        b, t, _ = x.shape
        q, k, v = (f(x).view(b, t, self.h, self.dk).transpose(1, 2) for f in (self.q, self.k, self.v))
        s = q @ k.transpose(-2, -1) / self.scale()
        bias = self.bias(mask, b, t, s.dtype)
        if bias is not None:
            s = s + bias
        y = s.softmax(-1) @ v
        return self.o(y.transpose(1, 2).reshape(b, t, self.h * self.dk))


class FloatBiasLayer(nn.Module):
    attention = FloatBiasAttention

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.attn = self.attention(d_model, num_heads)
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))
        self.n1, self.n2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)

    def forward(self, x, mask=None):
        x = self.n1(x + self.attn(x, mask))
        return self.n2(x + self.ff(x))


class _WrongScale(FloatBiasAttention):
    def scale(self):
        return float(self.h * self.dk)


class _IgnoredFloat(FloatBiasAttention):
    def bias(self, mask, b, tk, dtype):
        return None if mask is None or mask.dtype != torch.bool else super().bias(mask, b, tk, dtype)


class FloatBiasLayerBUG(FloatBiasLayer):
    attention = _WrongScale


class FloatBiasIgnoredLayer(FloatBiasLayer):
    attention = _IgnoredFloat
