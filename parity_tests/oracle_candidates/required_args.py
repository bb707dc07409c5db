"""Attention whose forward requires its mask argument (no default). Correct unless the docstring
says BUG."""
import math

import torch
import torch.nn as nn


class RequiredMaskAttention(nn.Module):
    """forward(query, key, value, mask): mask 1 = attend, 0 = hidden; mask is not optional."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.wq, self.wk = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.wv, self.wo = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def hidden(self, mask):
        return mask == 0

    def forward(self, query, key, value, mask):
        b, n, d = query.shape
        m = key.shape[1]
        q = self.wq(query).view(b, n, self.h, -1).transpose(1, 2)
        k = self.wk(key).view(b, m, self.h, -1).transpose(1, 2)
        v = self.wv(value).view(b, m, self.h, -1).transpose(1, 2)
        s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        s = s.masked_fill(self.hidden(mask), -1e9)
        return self.wo((torch.softmax(s, -1) @ v).transpose(1, 2).reshape(b, n, d))


class RequiredMaskAttentionIgnored(RequiredMaskAttention):
    """BUG: takes the mask but hides nothing."""

    def hidden(self, mask):
        return torch.zeros_like(mask, dtype=torch.bool)

