"""Multi-head attention whose constructor takes the width of each input, query, key and value,
beside the attention's own width (`query_dim, key_dim, value_dim, embed_dim, num_heads`, as
torch's kdim/vdim; `query_embed_dim, key_embed_dim, value_embed_dim, attention_embed_dim=256`):
a NumPy class computing x @ W and a torch module. Twins whose docstring says BUG have one planted
mistake."""
from __future__ import annotations

import numpy as np
import torch
import torch.nn as nn


class InputWidthAttention:
    def __init__(self, query_dim, key_dim, value_dim, embed_dim, num_heads):
        rng = np.random.default_rng(1)
        self.h = num_heads
        self.Wq = rng.standard_normal((query_dim, embed_dim))
        self.Wk = rng.standard_normal((key_dim, embed_dim))
        self.Wv = rng.standard_normal((value_dim, embed_dim))
        self.Wo = rng.standard_normal((embed_dim, query_dim))

    def _heads(self, x):
        return x.reshape(x.shape[0], x.shape[1], self.h, -1).transpose(0, 2, 1, 3)

    def _scale(self, dk):
        return np.sqrt(dk)

    def forward(self, q, k, v):
        Q, K, V = self._heads(q @ self.Wq), self._heads(k @ self.Wk), self._heads(v @ self.Wv)
        s = Q @ K.transpose(0, 1, 3, 2) / self._scale(Q.shape[-1])
        a = np.exp(s - s.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        return (a @ V).transpose(0, 2, 1, 3).reshape(q.shape[0], q.shape[1], -1) @ self.Wo


class InputWidthAttentionBUG(InputWidthAttention):
    """BUG: the scores are divided by d_k instead of its square root."""

    def _scale(self, dk):
        return float(dk)


class EmbedWidthAttention(nn.Module):
    def __init__(self, query_embed_dim, key_embed_dim, value_embed_dim, attention_embed_dim=256,
                 num_heads=4):
        super().__init__()
        self.h = num_heads
        self.q = nn.Linear(query_embed_dim, attention_embed_dim)
        self.k = nn.Linear(key_embed_dim, attention_embed_dim)
        self.v = nn.Linear(value_embed_dim, attention_embed_dim)
        self.o = nn.Linear(attention_embed_dim, query_embed_dim)

    def _heads(self, x):
        return x.view(x.shape[0], x.shape[1], self.h, -1).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        Q, K, V = self._heads(self.q(query)), self._heads(self.k(key)), self._heads(self.v(value))
        s = Q @ K.transpose(-2, -1) / Q.shape[-1] ** 0.5
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        y = torch.softmax(s, dim=-1) @ V
        return self.o(y.transpose(1, 2).reshape(query.shape[0], query.shape[1], -1))


class EmbedWidthAttentionBUG(EmbedWidthAttention):
    """BUG: the values are projected with the key projection."""

    def forward(self, query, key, value, mask=None):
        Q, K, V = self._heads(self.q(query)), self._heads(self.k(key)), self._heads(self.k(value))
        s = Q @ K.transpose(-2, -1) / Q.shape[-1] ** 0.5
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        y = torch.softmax(s, dim=-1) @ V
        return self.o(y.transpose(1, 2).reshape(query.shape[0], query.shape[1], -1))
