"""Scaled dot-product attention, torch, a module that asserts its inputs have three axes
(`assert q.dim() == 3`, (batch, T, d) tensors) although its `@` would run on four; masks 1 / True =
keep; returns (output, weights). Our own code; the BUG variant divides the scores by d_k instead of
its square root."""
from __future__ import annotations

import math

import torch
from torch import nn


class AxisCheckedAttention(nn.Module):
    def __init__(self, dropout: float = 0.0):
        super().__init__()
        self.drop = nn.Dropout(dropout)

    def scale(self, d_k: int) -> float:
        return math.sqrt(d_k)

    def forward(self, q, k, v, mask=None):
        assert q.dim() == 3 and k.dim() == 3, "expected (batch, T, d) tensors"
        if v.ndim != 3:
            raise ValueError(f"v must have 3 axes, got {tuple(v.shape)}")
        scores = q @ k.transpose(-2, -1) / self.scale(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask.bool(), float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return self.drop(weights) @ v, weights


class AxisCheckedAttention_BUG(AxisCheckedAttention):
    def scale(self, d_k: int) -> float:
        return float(d_k)
