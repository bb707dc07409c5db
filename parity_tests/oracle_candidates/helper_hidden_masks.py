"""Attention whose mask is True where a key is HIDDEN, applied not in forward but in a helper of the
same file the mask is handed to: a module-level `attend(q, k, v, mask=mask)` (the textbook layout),
a method `self._scores(...)` calling a NumPy helper, and encoder/decoder layers handing their masks
to such an attention (`self.self_attn(x, x, x, mask)`). One attention's helper reads its mask True =
seen (`mask == 0`), one hands the mask on through `*args` (out of reach). Twins whose docstring says
BUG have one planted mistake."""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn as nn


def attend(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def attend_unscaled(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def attend_seen(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def attend_packed(q, k, v, *rest):
    return attend(q, k, v, rest[0] if rest else None)


class HelperMaskAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.h, self.dk = n_heads, d_model // n_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def split(self, x):
        return x.view(x.shape[0], x.shape[1], self.h, self.dk).transpose(1, 2)

    def heads(self, q, k, v, mask):
        return attend(q, k, v, mask=mask)

    def forward(self, Q, K, V, mask=None):
        o = self.heads(self.split(self.W_Q(Q)), self.split(self.W_K(K)), self.split(self.W_V(V)), mask)
        return self.W_O(o.transpose(1, 2).reshape(Q.shape[0], Q.shape[1], -1))


class HelperMaskAttentionBUG(HelperMaskAttention):
    """BUG: its helper does not scale the scores."""

    def heads(self, q, k, v, mask):
        return attend_unscaled(q, k, v, mask=mask)


class SeenHelperAttention(HelperMaskAttention):
    """Right under the default convention: its helper reads the mask True = seen."""

    def heads(self, q, k, v, mask):
        return attend_seen(q, k, v, mask)


class PackedHelperAttention(HelperMaskAttention):
    """Right under --mask-convention drop; the mask reaches its helper through *args."""

    def heads(self, q, k, v, mask):
        return attend_packed(q, k, v, *([mask] if mask is not None else []))


class HelperMaskEncoderLayer(nn.Module):
    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.self_attn = HelperMaskAttention(d_model, n_heads)
        self.ff1, self.ff2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)

    def forward(self, x, mask=None):
        x = self.ln1(x + self.self_attn(x, x, x, mask))
        return self.ln2(x + self.ff2(torch.relu(self.ff1(x))))


class HelperMaskEncoderLayerBUG(HelperMaskEncoderLayer):
    """BUG: no residual around the feed-forward."""

    def forward(self, x, mask=None):
        x = self.ln1(x + self.self_attn(x, x, x, mask))
        return self.ln2(self.ff2(torch.relu(self.ff1(x))))


class HelperMaskDecoderLayer(nn.Module):
    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.self_attn = HelperMaskAttention(d_model, n_heads)
        self.cross_attn = HelperMaskAttention(d_model, n_heads)
        self.ff1, self.ff2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
        self.ln1, self.ln2, self.ln3 = (nn.LayerNorm(d_model) for _ in range(3))

    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        x = self.ln1(x + self.self_attn(x, x, x, tgt_mask))
        x = self.ln2(x + self.cross_attn(x, memory, memory, mask=memory_mask))
        return self.ln3(x + self.ff2(torch.relu(self.ff1(x))))


class HelperMaskDecoderLayerBUG(HelperMaskDecoderLayer):
    """BUG: no residual around the cross-attention."""

    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        x = self.ln1(x + self.self_attn(x, x, x, tgt_mask))
        x = self.ln2(self.cross_attn(x, memory, memory, mask=memory_mask))
        return self.ln3(x + self.ff2(torch.relu(self.ff1(x))))


def np_masked_scores(q, k, mask):
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    return s if mask is None else np.where(mask, -1e9, s)


def np_masked_scores_BUG(q, k, mask):
    s = q @ np.swapaxes(k, -1, -2) / q.shape[-1]
    return s if mask is None else np.where(mask, -1e9, s)


class NumpyHelperMaskAttention:
    """NumPy, forward only: forward -> self._scores -> a module-level helper."""

    def __init__(self, d_model, num_heads):
        rng = np.random.default_rng(0)
        self.h, self.dk = num_heads, d_model // num_heads
        self.Wq, self.Wk, self.Wv, self.Wo = (rng.standard_normal((d_model, d_model)) for _ in range(4))
        self.bq, self.bk, self.bv, self.bo = (np.zeros(d_model) for _ in range(4))

    def _split(self, x):
        return x.reshape(x.shape[0], x.shape[1], self.h, self.dk).transpose(0, 2, 1, 3)

    def _scores(self, q, k, mask):
        return np_masked_scores(q, k, mask)

    def forward(self, query, key, value, mask=None):
        q = self._split(query @ self.Wq + self.bq)
        k = self._split(key @ self.Wk + self.bk)
        v = self._split(value @ self.Wv + self.bv)
        s = self._scores(q, k, mask)
        w = np.exp(s - s.max(-1, keepdims=True))
        o = (w / w.sum(-1, keepdims=True)) @ v
        B, T = query.shape[:2]
        return o.transpose(0, 2, 1, 3).reshape(B, T, -1) @ self.Wo + self.bo


class NumpyHelperMaskAttentionBUG(NumpyHelperMaskAttention):
    """BUG: its helper divides the scores by d_k instead of its square root."""

    def _scores(self, q, k, mask):
        return np_masked_scores_BUG(q, k, mask)
