"""A student's multi-head attention with the classic bug of docs/ORACLE.md's worked example:
after attention, the heads are merged with a reshape but without transposing (B, H, T, d_k) back to
(B, T, H, d_k) first, which mixes positions and heads. Everything else is right."""
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        assert d_model % num_heads == 0
        self.d_k = d_model // num_heads
        self.num_heads = num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, Q, K, V, mask=None):
        B = Q.size(0)
        q = self.W_q(Q).view(B, -1, self.num_heads, self.d_k).transpose(1, 2)
        k = self.W_k(K).view(B, -1, self.num_heads, self.d_k).transpose(1, 2)
        v = self.W_v(V).view(B, -1, self.num_heads, self.d_k).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        attn = self.dropout(torch.softmax(scores, dim=-1))
        out = (attn @ v).reshape(B, -1, self.num_heads * self.d_k)   # BUG: no .transpose(1, 2)
        return self.W_o(out), attn
