"""Multi-head attention that returns the attention weights averaged over the heads, (B, Tq, Tk), as
torch.nn.MultiheadAttention does by default: batch and heads merged into one axis for the products.

HeadMeanAttention is the paper's attention (correct); HeadMaxAttention computes the same output but
returns the largest weight over the heads instead of their mean (a planted bug in the weights only).
"""
import math

import torch
from torch import nn


class HeadMeanAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.d_k = num_heads, d_model // num_heads
        self.wq = nn.Linear(d_model, d_model)
        self.wk = nn.Linear(d_model, d_model)
        self.wv = nn.Linear(d_model, d_model)
        self.wo = nn.Linear(d_model, d_model)

    def _merge(self, x):                                   # (B, T, D) -> (B*h, T, d_k)
        B, T, _ = x.shape
        return x.view(B, T, self.h, self.d_k).transpose(1, 2).reshape(B * self.h, T, self.d_k)

    def pool(self, w):                                     # (B, h, Tq, Tk) -> (B, Tq, Tk)
        return w.mean(dim=1)

    def forward(self, query, key, value, mask=None):
        B, Tq, _ = query.shape
        q, k, v = self._merge(self.wq(query)), self._merge(self.wk(key)), self._merge(self.wv(value))
        scores = (q @ k.transpose(1, 2) / math.sqrt(self.d_k)).view(B, self.h, Tq, -1)
        if mask is not None:                               # nonzero = attend
            mask = mask.unsqueeze(1) if mask.dim() == 3 else mask
            scores = scores.masked_fill(mask == 0, float("-inf"))
        w = torch.softmax(scores, dim=-1).view(B * self.h, Tq, -1)   # (B*h, Tq, Tk)
        ctx = (w @ v).view(B, self.h, Tq, self.d_k).transpose(1, 2).reshape(B, Tq, -1)
        return self.wo(ctx), self.pool(w.view(B, self.h, Tq, -1))


class HeadMaxAttention(HeadMeanAttention):
    def pool(self, w):
        return w.amax(dim=1)                               # bug: the largest weight, not the mean
