"""Layers whose attention projections sit at the layer's own level, each named for its role and
its projection (`self_q`, `cross_k`; `W_q_self`, `b_q_self`), with no attention sub-module.
Our own code in that style; the wrong twins say BUG."""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


class RoleNamedDecoderLayer(nn.Module):
    """Post-norm decoder layer; attention written with einsum, the keep-mask made additive."""

    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.h = n_heads
        self.self_q, self.self_k, self.self_v, self.self_o = (nn.Linear(d_model, d_model) for _ in range(4))
        self.cross_q, self.cross_k, self.cross_v, self.cross_o = (nn.Linear(d_model, d_model) for _ in range(4))
        self.ff1, self.ff2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))

    def attend(self, x, m, mask, q_l, k_l, v_l, o_l):
        B, T, D = x.shape
        dk = D // self.h
        q = q_l(x).view(B, T, self.h, dk)                                  # (B, T, H, dk)
        k, v = k_l(m).view(B, -1, self.h, dk), v_l(m).view(B, -1, self.h, dk)
        s = torch.einsum("bthd,bshd->bhts", q, k) / dk ** 0.5              # (B, H, T, S)
        if mask is not None:
            s = s + torch.zeros_like(s).masked_fill(~mask.bool(), float("-inf"))
        return o_l(torch.einsum("bhts,bshd->bthd", s.softmax(-1), v).reshape(B, T, D))

    def cross_roles(self):
        return self.cross_q, self.cross_k, self.cross_v, self.cross_o

    def forward(self, x, memory, tgt_mask=None, src_mask=None):
        x = self.norm1(x + self.attend(x, x, tgt_mask, self.self_q, self.self_k, self.self_v, self.self_o))
        x = self.norm2(x + self.attend(x, memory, src_mask, *self.cross_roles()))
        return self.norm3(x + self.ff2(F.relu(self.ff1(x))))


class RoleNamedDecoderLayerBUG(RoleNamedDecoderLayer):
    """BUG: the cross-attention's query comes from its key projection."""

    def cross_roles(self):
        return self.cross_k, self.cross_k, self.cross_v, self.cross_o


def _norm(x, g, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    return g * (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps) + b


class RoleNamedNumpyEncoderLayer:
    """NumPy post-norm encoder layer, forward only; bare (in, out) matrices named W_q_self ..."""

    def __init__(self, d_model, num_heads, d_ff):
        rng = np.random.default_rng(3)
        self.h = num_heads
        for p in "qkvo":
            setattr(self, f"W_{p}_self", rng.standard_normal((d_model, d_model)) / np.sqrt(d_model))
            setattr(self, f"b_{p}_self", np.zeros(d_model))
        self.W1, self.b1 = rng.standard_normal((d_model, d_ff)) * 0.1, np.zeros(d_ff)
        self.W2, self.b2 = rng.standard_normal((d_ff, d_model)) * 0.1, np.zeros(d_model)
        self.gamma1, self.beta1 = np.ones(d_model), np.zeros(d_model)
        self.gamma2, self.beta2 = np.ones(d_model), np.zeros(d_model)

    def scores(self, q, k):
        return q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])

    def attention(self, x, mask):
        B, T, D = x.shape
        dk = D // self.h

        def heads(t):                                                       # (B, T, D) -> (B, H, T, dk)
            return t.reshape(B, T, self.h, dk).transpose(0, 2, 1, 3)
        q = heads(x @ self.W_q_self + self.b_q_self)
        k = heads(x @ self.W_k_self + self.b_k_self)
        v = heads(x @ self.W_v_self + self.b_v_self)
        s = self.scores(q, k)                                               # (B, H, T, T)
        if mask is not None:
            s = np.where(mask != 0, s, -1e9)
        e = np.exp(s - s.max(-1, keepdims=True))
        y = (e / e.sum(-1, keepdims=True)) @ v                              # (B, H, T, dk)
        return y.transpose(0, 2, 1, 3).reshape(B, T, D) @ self.W_o_self + self.b_o_self

    def forward(self, x, mask=None):
        x = _norm(x + self.attention(x, mask), self.gamma1, self.beta1)
        return _norm(x + np.maximum(x @ self.W1 + self.b1, 0) @ self.W2 + self.b2, self.gamma2, self.beta2)


class RoleNamedNumpyEncoderLayerBUG(RoleNamedNumpyEncoderLayer):
    """BUG: the scores are scaled by 1/d_k instead of 1/sqrt(d_k)."""

    def scores(self, q, k):
        return q @ k.transpose(0, 1, 3, 2) / q.shape[-1]
