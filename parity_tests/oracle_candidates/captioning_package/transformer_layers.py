"""Attention for the captioning package: (T, S) masks, 0 = may not attend."""
import math

import torch
from torch import nn


class CaptionAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, dropout=0.1):
        super().__init__()
        self.key = nn.Linear(embed_dim, embed_dim)
        self.query = nn.Linear(embed_dim, embed_dim)
        self.value = nn.Linear(embed_dim, embed_dim)
        self.proj = nn.Linear(embed_dim, embed_dim)
        self.attn_drop = nn.Dropout(dropout)
        self.n_head = num_heads

    def forward(self, query, key, value, attn_mask=None):
        N, S, E = query.shape
        T = value.shape[1]
        d = E // self.n_head
        q = self.query(query).view(N, S, self.n_head, d).transpose(1, 2)
        k = self.key(key).view(N, T, self.n_head, d).transpose(1, 2)
        v = self.value(value).view(N, T, self.n_head, d).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(d)
        if attn_mask is not None:
            scores = scores.masked_fill(attn_mask == 0, float("-inf"))
        weights = self.attn_drop(torch.softmax(scores, dim=-1))
        return self.proj((weights @ v).transpose(1, 2).reshape(N, S, E))
