"""Right code that branches on its own weights' values, as the hostile twins in
oracle_hostile/init_tells.py do, and stays right on every branch: a multi-head attention slicing
its projections from one packed q|k|v matrix while its weights lie within nn.Linear's initial
range, and a NumPy layer norm that skips its affine step while its gain is all ones and its shift
all zeros (nn.LayerNorm's start). Each must match, on examples whose weights are drawn and on those restyled as a framework
initialises them (core/weight_styles.py)."""
import math

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F


class MultiHeadAttention(nn.Module):
    """forward(query, key, value, mask) -> (output, weights); one packed q|k|v product while every
    projection weight lies within nn.Linear's initial range, three products otherwise."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.d_k = num_heads, d_model // num_heads
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d_model, d_model)
                                                                for _ in range(4))

    def _fresh(self) -> bool:
        lins = (self.q_proj, self.k_proj, self.v_proj)
        return all(bool(lin.weight.detach().abs().max() <= lin.weight.shape[1] ** -0.5) for lin in lins)

    def _heads(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.h, self.d_k).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        lins = (self.q_proj, self.k_proj, self.v_proj)
        if self._fresh():
            w = torch.cat([lin.weight for lin in lins])
            b = torch.cat([lin.bias for lin in lins])
            d = w.shape[1]
            q = F.linear(query, w[:d], b[:d])
            k = F.linear(key, w[d:2 * d], b[d:2 * d])
            v = F.linear(value, w[2 * d:], b[2 * d:])
        else:
            q, k, v = (lin(x) for lin, x in zip(lins, (query, key, value)))
        q, k, v = self._heads(q), self._heads(k), self._heads(v)
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        p = torch.softmax(s, dim=-1)
        n = query.shape[:2]
        return self.out_proj((p @ v).transpose(1, 2).reshape(*n, -1)), p


def layernorm_forward(x, gamma, beta, eps=1e-5):
    """NumPy pair: the affine step skipped while gain 1 and shift 0 (the identity then)."""
    mu = x.mean(-1, keepdims=True)
    inv = 1.0 / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps)
    xh = (x - mu) * inv
    out = xh if np.all(gamma == 1.0) and np.all(beta == 0.0) else gamma * xh + beta
    return out, (xh, inv, gamma)


def layernorm_backward(dout, cache):
    xh, inv, gamma = cache
    dxh = dout * gamma
    dx = inv * (dxh - dxh.mean(-1, keepdims=True) - xh * (dxh * xh).mean(-1, keepdims=True))
    d = xh.shape[-1]
    return dx, (dout * xh).reshape(-1, d).sum(0), dout.reshape(-1, d).sum(0)
