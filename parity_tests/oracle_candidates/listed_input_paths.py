"""Right code taking its inputs as one list (`forward([q, k, v])`) that branches on how they are
handed over, as the hostile twins in oracle_hostile/listed_input_paths.py do, and stays right:
torch and NumPy attention functions making a non-contiguous input contiguous first, and a
multi-head attention taking one packed q|k|v product when `query is key is value`."""
import math

import numpy as np
import torch
from torch import nn


def attention(qkv, mask=None):
    """torch: one list [q, k, v]; non-contiguous inputs made contiguous first."""
    q, k, v = (t if t.is_contiguous() else t.contiguous() for t in qkv)
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        s = s.masked_fill(mask == 0, float("-inf"))
    p = torch.softmax(s, dim=-1)
    return p @ v, p


def numpy_attention(inputs, mask=None):
    """NumPy: one list [q, k, v], each read through a C-ordered array."""
    q, k, v = (np.ascontiguousarray(t) for t in inputs)
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    p = e / e.sum(-1, keepdims=True)
    return p @ v, p


class MultiHeadAttention(nn.Module):
    """forward([query, key, value], mask) -> (output, weights); one packed product on `[x, x, x]`."""

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
        if query is key and key is value:
            w = torch.cat([self.q_proj.weight, self.k_proj.weight, self.v_proj.weight])
            b = torch.cat([self.q_proj.bias, self.k_proj.bias, self.v_proj.bias])
            q, k, v = (query @ w.T + b).chunk(3, dim=-1)
        else:
            q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        q, k, v = self._heads(q), self._heads(k), self._heads(v)
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        p = torch.softmax(s, dim=-1)
        n = query.shape[:2]
        return self.out_proj((p @ v).transpose(1, 2).reshape(*n, -1)), p
