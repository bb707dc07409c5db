"""Attention that folds the heads into the batch axis and wants its mask already spread over that
axis, (batch*heads, Tq, Tk), batch-major (row b*heads + h), as torch.nn.MultiheadAttention's 3-D
attn_mask is laid out; our own code in that style. Wrong twins say BUG."""
from __future__ import annotations

import math

import torch
from torch import nn


class FoldedHeadsAttention(nn.Module):
    """Heads folded into the batch; `mask` (B*H, Tq, Tk), 1 = attend."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads, self.d_head = n_heads, d_model // n_heads
        self.wq, self.wk = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.wv, self.wo = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def fold(self, t):
        B, T, _ = t.shape
        return t.reshape(B, T, self.n_heads, self.d_head).transpose(1, 2).reshape(B * self.n_heads, T,
                                                                                   self.d_head)

    def unfold(self, t):
        BH, T, _ = t.shape
        B = BH // self.n_heads
        return t.reshape(B, self.n_heads, T, self.d_head).transpose(1, 2).reshape(B, T, -1)

    def scores(self, q, k):
        return torch.bmm(q, k.transpose(1, 2)) / math.sqrt(self.d_head)

    def forward(self, q, k, v, mask=None):
        s = self.scores(self.fold(self.wq(q)), self.fold(self.wk(k)))
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        return self.wo(self.unfold(torch.bmm(torch.softmax(s, dim=-1), self.fold(self.wv(v)))))


class FoldedHeadsAttentionNoScale(FoldedHeadsAttention):
    """BUG: the scores are not divided by sqrt(d_head)."""

    def scores(self, q, k):
        return torch.bmm(q, k.transpose(1, 2))


class FoldedHeadsAttentionMaskIgnored(FoldedHeadsAttention):
    """BUG: the mask is taken and never applied."""

    def forward(self, q, k, v, mask=None):
        return super().forward(q, k, v, None)
