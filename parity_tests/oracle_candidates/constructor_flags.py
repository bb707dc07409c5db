"""Attention and a GPT-style block whose constructors take a causal flag (and a bias flag), as
course skeletons and nanoGPT-like code do, each honouring it; the wrong twins say BUG. Our own
code."""
from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn


class FlaggedAttention(nn.Module):
    """Multi-head attention; causal=True hides every later key (top-left, as is_causal)."""

    def __init__(self, d_model, num_heads, causal=False, bias=True):
        super().__init__()
        self.h, self.causal = num_heads, causal
        self.q_proj, self.k_proj = nn.Linear(d_model, d_model, bias), nn.Linear(d_model, d_model, bias)
        self.v_proj, self.out_proj = nn.Linear(d_model, d_model, bias), nn.Linear(d_model, d_model, bias)

    def future(self, Tq, Tk, device):
        return torch.ones(Tq, Tk, dtype=torch.bool, device=device).tril()           # True = may attend

    def forward(self, query, key, value, mask=None):
        B, Tq, D = query.shape
        dk = D // self.h

        def heads(t):
            return t.view(B, -1, self.h, dk).transpose(1, 2)                      # (B, H, T, dk)
        q, k, v = heads(self.q_proj(query)), heads(self.k_proj(key)), heads(self.v_proj(value))
        scores = q @ k.transpose(-2, -1) / math.sqrt(dk)                          # (B, H, Tq, Tk)
        if self.causal:
            scores = scores.masked_fill(~self.future(Tq, k.shape[2], scores.device), float("-inf"))
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        y = (scores.softmax(-1) @ v).transpose(1, 2).reshape(B, Tq, D)
        return self.out_proj(y)


class FlaggedAttentionBUG(FlaggedAttention):
    """BUG: causal=True also hides the query's own position (the diagonal)."""

    def future(self, Tq, Tk, device):
        keep = torch.ones(Tq, Tk, dtype=torch.bool, device=device).tril(-1)
        keep[0, 0] = True                    # the first query keeps one key, so no row is empty
        return keep


class CausalFlagBlock(nn.Module):
    """Pre-norm block (nanoGPT shape): x + attn(ln_1(x)), then x + mlp(ln_2(x)); causal flag."""

    def __init__(self, d_model, num_heads, d_ff, is_causal=False):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = FlaggedAttention(d_model, num_heads, causal=is_causal)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))

    def forward(self, x, mask=None):
        h = self.ln_1(x)
        x = x + self.attn(h, h, h, mask)
        return x + self.mlp(self.ln_2(x))


class NumpyFlaggedAttention:
    """NumPy multi-head attention, forward only, (in, out) matrices; masked=True is causal."""

    def __init__(self, d_model, num_heads, masked=False):
        rng = np.random.default_rng(0)
        self.h, self.masked = num_heads, masked
        for n in ("W_q", "W_k", "W_v", "W_o"):
            setattr(self, n, rng.standard_normal((d_model, d_model)) / np.sqrt(d_model))
        for n in ("b_q", "b_k", "b_v", "b_o"):
            setattr(self, n, np.zeros(d_model))

    def forward(self, query, key, value, mask=None):
        B, Tq, D = query.shape
        dk = D // self.h

        def heads(t):
            return t.reshape(B, -1, self.h, dk).transpose(0, 2, 1, 3)              # (B, H, T, dk)
        q, k = heads(query @ self.W_q + self.b_q), heads(key @ self.W_k + self.b_k)
        v = heads(value @ self.W_v + self.b_v)
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dk)                              # (B, H, Tq, Tk)
        if self.masked:
            s = np.where(np.tril(np.ones((Tq, k.shape[2]), dtype=bool)), s, -np.inf)
        if mask is not None:
            s = np.where(mask != 0, s, -np.inf)
        e = np.exp(s - s.max(-1, keepdims=True))
        y = (e / e.sum(-1, keepdims=True)) @ v
        return y.transpose(0, 2, 1, 3).reshape(B, Tq, D) @ self.W_o + self.b_o


class RequiredCausalAttention(FlaggedAttention):
    """The same attention with its causal flag required (no default), as course skeletons write
    `MultiHeadAttention(d_model, num_heads, causal)`."""

    def __init__(self, d_model, num_heads, causal):
        super().__init__(d_model, num_heads, causal=causal)


class MaskSwitchAttention(FlaggedAttention):
    """No mask argument at all; `use_mask=True` hides the future (a decoder's self-attention)."""

    def __init__(self, d_model, num_heads, use_mask=False):
        super().__init__(d_model, num_heads, causal=use_mask)

    def forward(self, queries, keys, values):
        return super().forward(queries, keys, values)


class MaskArgumentSwitchAttention(FlaggedAttention):
    """A mask argument, and `use_mask` deciding whether that mask is applied: not a causal flag."""

    def __init__(self, d_model, num_heads, use_mask=True):
        super().__init__(d_model, num_heads)
        self.use_mask = use_mask

    def forward(self, query, key, value, mask=None):
        return super().forward(query, key, value, mask if self.use_mask else None)


class CausalAndMaskSwitchAttention(FlaggedAttention):
    """A causal flag and, beside the mask argument, a switch for that mask: only `causal` is flipped."""

    def __init__(self, d_model, num_heads, causal=False, use_mask=True):
        super().__init__(d_model, num_heads, causal=causal)
        self.use_mask = use_mask

    def forward(self, query, key, value, mask=None):
        return super().forward(query, key, value, mask if self.use_mask else None)
