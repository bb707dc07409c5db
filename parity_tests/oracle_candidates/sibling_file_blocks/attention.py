"""Multi-head attention, torch, four square projections; masks 0 = hidden. Our own code: the block
that encoder_layer.py's layer is handed, defined in this sibling file and imported by no file the
oracle loads."""
from __future__ import annotations

import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model: int, num_heads: int):
        super().__init__()
        self.h, self.d_k = num_heads, d_model // num_heads
        self.proj = nn.ModuleList(nn.Linear(d_model, d_model) for _ in range(4))

    def forward(self, query, key, value, mask=None):
        b = query.shape[0]
        q, k, v = (lin(x).view(b, -1, self.h, self.d_k).transpose(1, 2)
                   for lin, x in zip(self.proj, (query, key, value)))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(mask.unsqueeze(1) == 0, -1e9)
        out = torch.softmax(scores, dim=-1) @ v
        return self.proj[3](out.transpose(1, 2).reshape(b, -1, self.h * self.d_k))
