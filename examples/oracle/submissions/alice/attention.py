"""A student's multi-head attention (PyTorch), right: the example the README's grading commands use."""
import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.d_k = num_heads, d_model // num_heads
        self.W_q, self.W_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.W_v, self.W_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def scores(self, q, k):
        return q @ k.transpose(-2, -1) / math.sqrt(self.d_k)                # (B, H, Tq, Tk)

    def forward(self, query, key, value, mask=None):
        B = query.shape[0]

        def heads(x):
            return x.view(B, -1, self.h, self.d_k).transpose(1, 2)            # (B, H, T, d_k)
        s = self.scores(heads(self.W_q(query)), heads(self.W_k(key)))
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))                        # mask: 1 = may attend
        out = torch.softmax(s, dim=-1) @ heads(self.W_v(value))                # (B, H, Tq, d_k)
        return self.W_o(out.transpose(1, 2).reshape(B, -1, self.h * self.d_k))
