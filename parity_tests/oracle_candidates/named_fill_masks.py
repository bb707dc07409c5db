"""Scaled dot-product attention whose mask is True where a key is HIDDEN and whose fill value is
bound to a name first (`neg = torch.finfo(scores.dtype).min`, then `masked_fill(mask, neg)`), as
tutorials write it to stay safe in float16 (test data for parity_tests/test_oracle_named_fill_masks.py).
Twins whose docstring says BUG have one planted mistake."""
from __future__ import annotations

import math

import torch
import torch.nn as nn


class NamedFillAttention(nn.Module):
    def __init__(self, d_k):
        super().__init__()
        self.scale = 1.0 / math.sqrt(d_k)

    def forward(self, q, k, v, mask=None):
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.scale   # (B, H, Tq, Tk)
        if mask is not None:
            neg = torch.finfo(scores.dtype).min
            scores = scores.masked_fill(mask, neg)
        return torch.matmul(torch.softmax(scores, dim=-1), v)


class NamedSmallFillAttention(NamedFillAttention):
    """BUG: the name holds -1.0, so a hidden key keeps most of its weight."""

    def forward(self, q, k, v, mask=None):
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.scale
        if mask is not None:
            neg = -1.0
            scores = scores.masked_fill(mask, neg)
        return torch.matmul(torch.softmax(scores, dim=-1), v)


class NamedFillRebound(NamedFillAttention):
    """BUG: the large negative is replaced by 0 before use, so hidden keys are only zeroed scores."""

    def forward(self, q, k, v, mask=None):
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.scale
        if mask is not None:
            neg = torch.finfo(scores.dtype).min
            neg = 0.0
            scores = scores.masked_fill(mask, neg)
        return torch.matmul(torch.softmax(scores, dim=-1), v)
