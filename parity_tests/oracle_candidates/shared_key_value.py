"""Multi-head attention taking key and value as ONE argument, the tensor both are projected from
(`forward(x, kv, mask)`, as a decoder's cross-attention over encoder memory is often written), and
heads counted under a name no alias lists (`number_of_heads`). Right unless BUG."""
import math

import torch
from torch import nn


class KeyValueArgumentAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.d_k = num_heads, d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def heads(self, t):
        return t.view(t.shape[0], t.shape[1], self.h, self.d_k).transpose(1, 2)

    def project(self, x, kv):
        return self.heads(self.q_proj(x)), self.heads(self.k_proj(kv)), self.heads(self.v_proj(kv))

    def forward(self, x, kv, mask=None):
        q, k, v = self.project(x, kv)
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        o = torch.softmax(s, dim=-1) @ v
        return self.out_proj(o.transpose(1, 2).reshape(x.shape[0], x.shape[1], -1))


class KeyValueArgumentAttentionBUG(KeyValueArgumentAttention):
    """BUG: the values are projected from the query input instead of the key/value one."""

    def project(self, x, kv):
        return self.heads(self.q_proj(x)), self.heads(self.k_proj(kv)), self.heads(self.v_proj(x))


class CountedHeadsKeyAndValueAttention(KeyValueArgumentAttention):
    """The same computation, built as (number_of_heads, d_model) and called as
    forward(queries, key_and_value, mask)."""

    def __init__(self, number_of_heads, d_model):
        super().__init__(d_model, number_of_heads)

    def forward(self, queries, key_and_value, mask=None):
        return super().forward(queries, key_and_value, mask)
