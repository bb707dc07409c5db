"""Right attention that says which mask dtypes it takes, in the styles of
oracle_hostile/claims_int_masks.py: a multi-head attention annotating `mask: torch.LongTensor` and
reading any dtype as nonzero = may attend; a NumPy attention whose docstring says "mask: int64, 1 =
keep" comparing with 0; and a bool-only one saying so (`mask: torch.BoolTensor`, `~mask`). The
first two are also handed 0/1 integer masks and match; the third makes no integer claim, is never
handed one, and matches too."""
from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn


class AnnotatedMaskAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.d_k = num_heads, d_model // num_heads
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d_model, d_model)
                                                                for _ in range(4))

    def _heads(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.h, self.d_k).transpose(1, 2)              # (B, H, T, d_k)

    def _attend(self, query, key, value, hidden):
        q, k, v = self._heads(self.q_proj(query)), self._heads(self.k_proj(key)), self._heads(self.v_proj(value))
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)                   # (B, H, Tq, Tk)
        if hidden is not None:
            s = s.masked_fill(hidden, float("-inf"))
        w = torch.softmax(s, dim=-1)
        o = (w @ v).transpose(1, 2).reshape(query.shape[0], -1, self.h * self.d_k)
        return self.out_proj(o), w

    def forward(self, query, key, value, mask: torch.LongTensor | None = None):
        return self._attend(query, key, value, None if mask is None else mask == 0)


class BoolMaskAttention(AnnotatedMaskAttention):
    def forward(self, query, key, value, mask: torch.BoolTensor | None = None):
        return self._attend(query, key, value, None if mask is None else ~mask)


def attention(q, k, v, mask=None):
    """Scaled dot-product attention.

    mask: (B, 1, Tq, Tk) int64 array, 1 = keep, 0 = hidden (or None).
    """
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])               # (B, H, Tq, Tk)
    if mask is not None:
        s = np.where(mask == 0, -1e9, s)
    s = s - s.max(axis=-1, keepdims=True)
    w = np.exp(s)
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ v, w
