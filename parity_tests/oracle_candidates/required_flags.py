"""Attention whose constructor requires a flag that only switches on extras (keeping the attention
weights for inspection), in three versions: correct, with a planted bug, and with a required flag
that decides the computation (masking the future), which the oracle must not guess."""
from __future__ import annotations

import math

import torch
from torch import nn


class FlaggedAttention(nn.Module):
    """Multi-head attention; `log_attention_weights` keeps the last weights on the module."""

    scale_scores = True

    def __init__(self, d_model, num_heads, log_attention_weights):
        super().__init__()
        self.heads, self.width = num_heads, d_model // num_heads
        self.log_attention_weights = log_attention_weights
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        self.logged = None

    def split(self, t):
        return t.view(t.shape[0], t.shape[1], self.heads, self.width).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        q, k, v = self.split(self.q_proj(query)), self.split(self.k_proj(key)), self.split(self.v_proj(value))
        scores = q @ k.transpose(-2, -1)
        if self.scale_scores:
            scores = scores / math.sqrt(self.width)
        if mask is not None:
            keep = mask if mask.dim() == 4 else mask.unsqueeze(1)
            scores = scores.masked_fill(keep == 0, -1e9)
        weights = torch.softmax(scores, dim=-1)
        if self.log_attention_weights:
            self.logged = weights.detach()
        out = (weights @ v).transpose(1, 2).reshape(query.shape[0], query.shape[1], -1)
        return self.out_proj(out)


class FlaggedAttentionUnscaled(FlaggedAttention):
    """BUG: the scores are never divided by sqrt(d_k)."""

    scale_scores = False


class CausalFlagAttention(FlaggedAttention):
    """A required flag that decides the computation: whether the future is masked."""

    def __init__(self, d_model, num_heads, causal):
        super().__init__(d_model, num_heads, False)
        self.causal = causal
