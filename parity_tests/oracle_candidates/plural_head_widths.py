"""An attention sized as a widely read tutorial sizes it: `d_queries` and `d_values` are the width
of one head's queries (and keys) and values, each projection n_heads times as wide. Correct unless
the docstring says BUG."""
import math

import torch
from torch import nn


class PluralHeadWidthAttention(nn.Module):
    def __init__(self, d_model, n_heads, d_queries, d_values, dropout=0.1):
        super().__init__()
        self.h, self.dq, self.dv = n_heads, d_queries, d_values
        self.q_proj = nn.Linear(d_model, n_heads * d_queries)
        self.k_proj = nn.Linear(d_model, n_heads * d_queries)
        self.v_proj = nn.Linear(d_model, n_heads * d_values)
        self.out_proj = nn.Linear(n_heads * d_values, d_model)
        self.drop = nn.Dropout(dropout)

    def divisor(self):
        return math.sqrt(self.dq)

    def forward(self, query, key, value, mask=None):
        B, Tq, _ = query.shape
        Tk = key.shape[1]
        q = self.q_proj(query).view(B, Tq, self.h, self.dq).transpose(1, 2)
        k = self.k_proj(key).view(B, Tk, self.h, self.dq).transpose(1, 2)
        v = self.v_proj(value).view(B, Tk, self.h, self.dv).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / self.divisor()            # (B, h, Tq, Tk)
        if mask is not None:
            scores = scores.masked_fill(~mask.bool(), -1e9)
        out = self.drop(torch.softmax(scores, dim=-1)) @ v           # (B, h, Tq, dv)
        return self.out_proj(out.transpose(1, 2).reshape(B, Tq, self.h * self.dv))


class PluralHeadWidthAttentionBUG(PluralHeadWidthAttention):
    """BUG: scores divided by d_queries, not its square root."""

    def divisor(self):
        return float(self.dq)
