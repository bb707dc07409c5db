"""Candidates reading their hyperparameters as dict items (`cfg["emb_dim"]`) and constructors whose
arguments name a quantity no hyperparameter alias covers (`d_out`, `context_length`, `data_type`).

Each is correct unless its docstring says BUG.
"""
import math

import numpy as np
import torch
import torch.nn as nn


class ItemConfigAttention(nn.Module):
    """Multi-head self-attention configured by a dict: width, heads, a length bounding the
    sequences (a position table sized by it, unused), a dropout rate and a bias switch."""

    def __init__(self, cfg):
        super().__init__()
        d, h = cfg["emb_dim"], cfg["n_heads"]
        self.h = h
        self.limit = cfg["context_length"]
        self.W_query = nn.Linear(d, d, bias=cfg["qkv_bias"])
        self.W_key = nn.Linear(d, d, bias=cfg["qkv_bias"])
        self.W_value = nn.Linear(d, d, bias=cfg["qkv_bias"])
        self.out_proj = nn.Linear(d, d)
        self.drop = nn.Dropout(cfg["drop_rate"])
        self.register_buffer("slots", torch.zeros(self.limit), persistent=False)

    def _heads(self, t):
        b, n, d = t.shape
        return t.view(b, n, self.h, d // self.h).transpose(1, 2)

    def scale(self, width):
        return math.sqrt(width)

    def forward(self, x):
        b, n, d = x.shape
        assert n <= self.slots.shape[0], "sequence longer than the configured length"
        q, k, v = self._heads(self.W_query(x)), self._heads(self.W_key(x)), self._heads(self.W_value(x))
        w = torch.softmax(q @ k.transpose(-2, -1) / self.scale(d // self.h), dim=-1)
        out = (self.drop(w) @ v).transpose(1, 2).reshape(b, n, d)
        return self.out_proj(out)


class ItemConfigAttentionUnscaled(ItemConfigAttention):
    """BUG: the scores are not scaled."""

    def scale(self, width):
        return 1.0


class ItemConfigUnknownKey(ItemConfigAttention):
    """Reads a key whose name says nothing (the oracle cannot know its value)."""

    def __init__(self, cfg):
        super().__init__(cfg)
        self.mode = cfg["flux_capacitor"]


class OutWidthAttention(nn.Module):
    """rasbt-style signature: input and output widths, a context length (a causal-mask buffer
    sized by it, not applied here: plain self-attention), a dropout rate, heads."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads):
        super().__init__()
        self.h = num_heads
        self.q = nn.Linear(d_in, d_out)
        self.k = nn.Linear(d_in, d_out)
        self.v = nn.Linear(d_in, d_out)
        self.o = nn.Linear(d_out, d_out)
        self.drop = nn.Dropout(dropout)
        self.register_buffer("tri", torch.triu(torch.ones(context_length, context_length), 1))

    def forward(self, x):
        b, n, _ = x.shape
        q, k, v = (t.view(b, n, self.h, -1).transpose(1, 2) for t in (self.q(x), self.k(x), self.v(x)))
        w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) + self.bias(n), dim=-1)
        return self.o((self.drop(w) @ v).transpose(1, 2).reshape(b, n, -1))

    def bias(self, n):
        return torch.zeros(n, n, dtype=self.tri.dtype)


class OutWidthAttentionPeeks(OutWidthAttention):
    """BUG: adds the (unscaled) mask buffer to the scores, favouring later positions."""

    def bias(self, n):
        return self.tri[:n, :n]


class TypedFeedForward:
    """NumPy feed-forward whose constructor requires the array dtype: weights kept in it."""

    def __init__(self, d_model, d_ff, data_type):
        self.data_type = data_type
        rng = np.random.default_rng(0)
        self.W1 = rng.standard_normal((d_ff, d_model)).astype(data_type)
        self.b1 = np.zeros(d_ff, dtype=data_type)
        self.W2 = rng.standard_normal((d_model, d_ff)).astype(data_type)
        self.b2 = np.zeros(d_model, dtype=data_type)

    def forward(self, x):
        h = np.maximum(x.astype(self.data_type) @ self.W1.T + self.b1, 0)
        return h @ self.W2.T + self.b2


class TypedFeedForwardNoRelu(TypedFeedForward):
    """BUG: no activation between the two linear maps."""

    def forward(self, x):
        return (x.astype(self.data_type) @ self.W1.T + self.b1) @ self.W2.T + self.b2
