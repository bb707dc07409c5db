"""Self-attention whose output sub-module does the residual and LayerNorm itself (as BERT's and
RoBERTa's `...Attention` do): every attention parameter has a counterpart in the reference, the
LayerNorm none. The oracle must say what it found (Add & Norm inside), not a bare mapping error."""
from __future__ import annotations

import math

import torch
from torch import nn


class _SelfPart(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads, self.head_width = heads, width // heads
        self.query = nn.Linear(width, width)
        self.key = nn.Linear(width, width)
        self.value = nn.Linear(width, width)

    def forward(self, x, mask=None):
        b, t, _ = x.shape

        def split(z):
            return z.view(b, t, self.heads, self.head_width).transpose(1, 2)
        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_width)
        if mask is not None:
            scores = scores.masked_fill((mask if mask.dim() == 4 else mask.unsqueeze(1)) == 0, float("-inf"))
        return (torch.softmax(scores, -1) @ v).transpose(1, 2).reshape(b, t, -1)


class _OutputPart(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.dense = nn.Linear(width, width)
        self.LayerNorm = nn.LayerNorm(width)

    def forward(self, context, x):
        return self.LayerNorm(self.dense(context) + x)


class AttentionWithOutputNorm(nn.Module):
    """Attention + Add & Norm: LayerNorm(x + W_o MultiHead(x))."""

    def __init__(self, hidden_size, num_attention_heads):
        super().__init__()
        self.self = _SelfPart(hidden_size, num_attention_heads)
        self.output = _OutputPart(hidden_size)

    def forward(self, hidden_states, attention_mask=None):
        return self.output(self.self(hidden_states, attention_mask), hidden_states)
