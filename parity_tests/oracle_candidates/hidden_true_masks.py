"""Attention whose mask is True (or 1) where a key is HIDDEN, as many tutorials build it
(`create_padding_mask` returning 1 at padding; a causal mask from `triu(ones, 1)`): a NumPy
function adding `mask * -1e9` to its scores, and a torch module filling `masked_fill(mask, -inf)`.
Twins whose docstring says BUG have one planted mistake."""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn as nn


def _softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def hidden_mask_attention(Q, K, V, mask=None):
    scores = np.matmul(Q, np.swapaxes(K, -1, -2)) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores + (mask * -1e9)
    weights = _softmax(scores)
    return np.matmul(weights, V), weights


def hidden_mask_attention_BUG(Q, K, V, mask=None):
    """BUG: the scores are divided by d_k instead of its square root."""
    scores = np.matmul(Q, np.swapaxes(K, -1, -2)) / Q.shape[-1]
    if mask is not None:
        scores = scores + (mask * -1e9)
    weights = _softmax(scores)
    return np.matmul(weights, V), weights


class HiddenMaskAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.d_k = num_heads, d_model // num_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)

    def scale(self):
        return math.sqrt(self.d_k)

    def forward(self, x, mask=None):
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.h, self.d_k).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-2, -1) / self.scale()
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))
        y = torch.softmax(scores, dim=-1) @ v
        return self.out(y.transpose(1, 2).reshape(b, n, d))


class HiddenMaskAttentionBUG(HiddenMaskAttention):
    """BUG: the scores are not scaled."""

    def scale(self):
        return 1.0
