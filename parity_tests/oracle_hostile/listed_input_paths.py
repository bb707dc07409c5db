"""Attention taking its inputs as one list (`forward([q, k, v])`, a style the oracle reads) that
takes a wrong path on how those inputs are handed over: without the 1/sqrt(d) scale on a
non-contiguous q (torch, NumPy), or scaling by 1/sqrt(d_model) when `query is key` (a multi-head
attention). Each matched: the aliased, strided and relaid modes were never run for a list-taking
forward (the list was built before those modes changed its items)."""
import math

import numpy as np
import torch
from torch import nn


def attention(qkv, mask=None):
    """torch: one list [q, k, v]; no 1/sqrt(d) when q is not contiguous."""
    q, k, v = qkv
    s = q @ k.transpose(-2, -1) / (math.sqrt(q.shape[-1]) if q.is_contiguous() else 1.0)
    if mask is not None:
        s = s.masked_fill(mask == 0, float("-inf"))
    p = torch.softmax(s, dim=-1)
    return p @ v, p


def numpy_attention(inputs, mask=None):
    q, k, v = inputs
    s = q @ np.swapaxes(k, -1, -2) / (np.sqrt(q.shape[-1]) if q.flags.c_contiguous else 1.0)
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    p = e / e.sum(-1, keepdims=True)
    return p @ v, p


class MultiHeadAttention(nn.Module):
    """forward([query, key, value], mask); a scale of 1/sqrt(d_model) when key is query."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.d_k = num_heads, d_model // num_heads
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d_model, d_model)
                                                                for _ in range(4))

    def _heads(self, t):
        b, n, _ = t.shape
        return t.reshape(b, n, self.h, self.d_k).transpose(1, 2)

    def forward(self, inputs, mask=None):
        query, key, value = inputs
        scale = self.h * self.d_k if query is key else self.d_k
        q, k, v = self._heads(self.q_proj(query)), self._heads(self.k_proj(key)), \
            self._heads(self.v_proj(value))
        s = q @ k.transpose(-2, -1) / math.sqrt(scale)
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        p = torch.softmax(s, dim=-1)
        b, n = query.shape[:2]
        return self.out_proj((p @ v).transpose(1, 2).reshape(b, n, -1)), p
