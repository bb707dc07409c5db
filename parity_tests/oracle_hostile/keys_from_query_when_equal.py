"""Wrong only on a structural subset: when the query and key lengths are equal (2 or more), the keys and values
are computed from the query (a self-attention shortcut), and any mask is replaced by the causal one.
Random sizes rarely draw cross-attention with equal lengths, so this used to score."""
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.d_k = num_heads, d_model // num_heads
        self.W_q, self.W_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.W_v, self.W_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        B, Tq, D = query.shape
        if key.shape[1] == Tq >= 2:
            key = value = query
            if mask is not None:
                mask = torch.ones(Tq, Tq, dtype=torch.bool).tril()[None, None]
        q = self.W_q(query).view(B, Tq, self.h, self.d_k).transpose(1, 2)
        k = self.W_k(key).view(B, -1, self.h, self.d_k).transpose(1, 2)
        v = self.W_v(value).view(B, -1, self.h, self.d_k).transpose(1, 2)
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            s = s.masked_fill(mask == 0, -1e9)
        w = torch.softmax(s, dim=-1)
        return self.W_o((w @ v).transpose(1, 2).reshape(B, Tq, D)), w
