"""Attention that reads masks right in one dtype only (its docstring says it takes bool and 0/1
int masks): integer masks read the other way round (nonzero = hidden, nn.MultiheadAttention's
byte-mask habit), or the reverse, bool masks read as hidden. The first matched every check drawing
bool masks, which is every check unless an instructor asked for another dtype."""
import math

import torch
from torch import nn


class _Base(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.dk = num_heads, d_model // num_heads
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d_model, d_model)
                                                                for _ in range(4))

    def attend(self, query, key, value, hidden):
        b, tq, _ = query.shape
        tk = key.shape[1]
        q = self.q_proj(query).view(b, tq, self.h, self.dk).transpose(1, 2)
        k = self.k_proj(key).view(b, tk, self.h, self.dk).transpose(1, 2)
        v = self.v_proj(value).view(b, tk, self.h, self.dk).transpose(1, 2)
        s = q @ k.transpose(-2, -1) / math.sqrt(self.dk)
        if hidden is not None:
            s = s.masked_fill(hidden, float("-inf"))
        p = torch.softmax(s, dim=-1)
        return self.out_proj((p @ v).transpose(1, 2).reshape(b, tq, self.h * self.dk)), p


class IntMaskMisread(_Base):
    """mask: bool or 0/1 int, nonzero = may attend."""

    def forward(self, query, key, value, mask=None):
        hidden = None if mask is None else (~mask if mask.dtype == torch.bool else mask != 0)
        return self.attend(query, key, value, hidden)


class BoolMaskMisread(_Base):
    """mask: bool or 0/1 int, nonzero = may attend."""

    def forward(self, query, key, value, mask=None):
        hidden = None if mask is None else (mask if mask.dtype == torch.bool else mask == 0)
        return self.attend(query, key, value, hidden)
