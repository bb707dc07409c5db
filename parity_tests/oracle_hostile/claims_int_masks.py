"""Attention whose code says its mask takes 0/1 integers and reads them wrongly: a multi-head
attention annotating `mask: torch.LongTensor` that takes a nonzero integer for hidden
(nn.MultiheadAttention's byte-mask habit), and a NumPy attention whose docstring says "mask: int64,
1 = keep" that negates it with `~` (right for bool; for 0/1 integers every key is hidden). Both are
right on bool masks, the only dtype a check draws unless the assignment names another: they matched,
their own claims never exercised."""
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

    def forward(self, query, key, value, mask: torch.LongTensor | None = None):
        q, k, v = self._heads(self.q_proj(query)), self._heads(self.k_proj(key)), self._heads(self.v_proj(value))
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)                   # (B, H, Tq, Tk)
        if mask is not None:
            hidden = ~mask if mask.dtype == torch.bool else mask != 0       # BUG: ints read as hidden
            s = s.masked_fill(hidden, float("-inf"))
        w = torch.softmax(s, dim=-1)
        o = (w @ v).transpose(1, 2).reshape(query.shape[0], -1, self.h * self.d_k)
        return self.out_proj(o), w


def attention(q, k, v, mask=None):
    """Scaled dot-product attention.

    mask: (B, 1, Tq, Tk) int64 array, 1 = keep, 0 = hidden (or None).
    """
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])               # (B, H, Tq, Tk)
    if mask is not None:
        s = np.where(~mask, -1e9, s)                                        # BUG: ~1 and ~0 nonzero
    s = s - s.max(axis=-1, keepdims=True)
    w = np.exp(s)
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ v, w
