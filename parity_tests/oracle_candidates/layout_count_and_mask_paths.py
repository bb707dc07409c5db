"""Right code that branches on what the red-team files in parity_tests/oracle_hostile/
(stride_branch.py, nth_call_switch.py, mask_dtype_misread.py) branch on, and stays right there:
attention that copies an input with a negative or zero stride, or one inside a wider buffer,
before using it; a layer norm whose custom backward makes an expanded upstream gradient contiguous;
a NumPy pair that copies an odd upstream gradient; layers that refresh a cached product every few
calls (from the weights, so always right); an attention taking bool, 0/1 int or 0/1 float masks.
Each must match, also when the oracle varies layouts, call counts and mask dtypes."""
import math

import numpy as np
import torch
from torch import nn


def numpy_attention(q, k, v, mask=None):
    q, k, v = (np.ascontiguousarray(a) if min(a.strides) <= 0 else a for a in (q, k, v))
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    p = e / e.sum(-1, keepdims=True)
    return p @ v, p


def packed_attention(q, k, v, mask=None):
    """torch: inputs that are expanded or start inside a buffer are copied first."""
    q, k, v = (a.contiguous() if 0 in a.stride() or a.storage_offset() else a for a in (q, k, v))
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        s = s.masked_fill(mask == 0, float("-inf"))
    p = torch.softmax(s, dim=-1)
    return p @ v, p


class _Norm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, b):
        mu = x.mean(-1, keepdim=True)
        rstd = (x.var(-1, unbiased=False, keepdim=True) + 1e-5).rsqrt()
        xh = (x - mu) * rstd
        ctx.save_for_backward(xh, rstd, w)
        return xh * w + b

    @staticmethod
    def backward(ctx, g):
        xh, rstd, w = ctx.saved_tensors
        if 0 in g.stride():
            g = g.contiguous()
        gx = g * w
        dx = gx - gx.mean(-1, keepdim=True) - xh * (gx * xh).mean(-1, keepdim=True)
        red = tuple(range(g.dim() - 1))
        return rstd * dx, (g * xh).sum(red), g.sum(red)


class LayerNorm(nn.Module):
    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))

    def forward(self, x):
        return _Norm.apply(x, self.weight, self.bias)


def layernorm_forward(x, gamma, beta, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    rstd = 1.0 / np.sqrt(x.var(-1, keepdims=True) + eps)
    xh = (x - mu) * rstd
    return xh * gamma + beta, (xh, rstd, gamma)


def layernorm_backward(dout, cache):
    xh, rstd, gamma = cache
    if min(dout.strides) <= 0 or not dout.flags.c_contiguous:
        dout = np.array(dout, order="C")
    gx = dout * gamma
    dx = gx - gx.mean(-1, keepdims=True) - xh * (gx * xh).mean(-1, keepdims=True)
    red = tuple(range(dout.ndim - 1))
    return rstd * dx, (dout * xh).sum(red), dout.sum(red)


class MultiHeadAttention(nn.Module):
    """Counts its calls: its first two ("warm-up") take the scores in float64, the later ones in
    the input's dtype (the same values in a float64 check, rounding apart in float32); takes bool,
    0/1 int or 0/1 float masks."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.dk = num_heads, d_model // num_heads
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d_model, d_model)
                                                                for _ in range(4))
        self.steps = 0

    def forward(self, query, key, value, mask=None):
        self.steps += 1
        b, tq, _ = query.shape
        tk = key.shape[1]
        q = self.q_proj(query).view(b, tq, self.h, self.dk).transpose(1, 2)
        k = self.k_proj(key).view(b, tk, self.h, self.dk).transpose(1, 2)
        v = self.v_proj(value).view(b, tk, self.h, self.dk).transpose(1, 2)
        if self.steps <= 2:
            s = (q.double() @ k.double().transpose(-2, -1)).to(q.dtype) / math.sqrt(self.dk)
        else:
            s = q @ k.transpose(-2, -1) / math.sqrt(self.dk)
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        p = torch.softmax(s, dim=-1)
        return self.out_proj((p @ v).transpose(1, 2).reshape(b, tq, self.h * self.dk)), p


class FeedForward:
    """NumPy: keeps W1's transpose and refreshes it when W1's bytes change."""

    def __init__(self, d_model, d_ff):
        self.W1, self.b1 = np.zeros((d_ff, d_model)), np.zeros(d_ff)
        self.W2, self.b2 = np.zeros((d_model, d_ff)), np.zeros(d_model)
        self.key, self.w1t = None, None

    def forward(self, x):
        key = self.W1.tobytes()
        if key != self.key:
            self.key, self.w1t = key, self.W1.T.copy()
        self.x, self.h = x, x @ self.w1t + self.b1
        self.a = np.maximum(self.h, 0)
        return self.a @ self.W2.T + self.b2

    def backward(self, dout):
        self.dW2 = dout.reshape(-1, dout.shape[-1]).T @ self.a.reshape(-1, self.a.shape[-1])
        self.db2 = dout.reshape(-1, dout.shape[-1]).sum(0)
        dh = (dout @ self.W2) * (self.h > 0)
        self.dW1 = dh.reshape(-1, dh.shape[-1]).T @ self.x.reshape(-1, self.x.shape[-1])
        self.db1 = dh.reshape(-1, dh.shape[-1]).sum(0)
        return dh @ self.W1
