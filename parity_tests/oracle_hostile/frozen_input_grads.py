"""Backwards on custom autograd.Functions that go wrong when some inputs need no gradient: a layer
norm whose gain gradient drops the normalised input when its input needs none (a norm on a
network's raw features, or after a frozen layer), and an attention whose query gradient loses its
1/sqrt(d) when the keys need none (a cross-attention over a frozen encoder's memory). Both
matched: every main run's inputs required gradients."""
import math

import torch
from torch import nn


class _Norm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, gamma, beta, eps):
        mu = x.mean(-1, keepdim=True)
        inv = torch.rsqrt(x.var(-1, unbiased=False, keepdim=True) + eps)
        xh = (x - mu) * inv
        ctx.save_for_backward(xh, inv, gamma)
        return gamma * xh + beta

    @staticmethod
    def backward(ctx, g):
        xh, inv, gamma = ctx.saved_tensors
        dx = None
        d = xh.shape[-1]
        if ctx.needs_input_grad[0]:
            dxh = g * gamma
            dx = inv * (dxh - dxh.mean(-1, keepdim=True) - xh * (dxh * xh).mean(-1, keepdim=True))
            dgamma = (g * xh).reshape(-1, d).sum(0)
        else:                                   # "input frozen": a shortcut that drops a term
            dgamma = g.reshape(-1, d).sum(0)
        return dx, dgamma, g.reshape(-1, d).sum(0), None


class LayerNorm(nn.Module):
    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))
        self.eps = eps

    def forward(self, x):
        return _Norm.apply(x, self.weight, self.bias, self.eps)


class _Attention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, mask):
        s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        p = torch.softmax(s, dim=-1)
        ctx.save_for_backward(q, k, v, p)
        return p @ v

    @staticmethod
    def backward(ctx, g):
        q, k, v, p = ctx.saved_tensors
        dp = g @ v.transpose(-2, -1)
        ds = p * (dp - (dp * p).sum(-1, keepdim=True))
        scale = 1.0 / math.sqrt(q.shape[-1])
        frozen_keys = not ctx.needs_input_grad[1]
        dq = ds @ k if frozen_keys else ds @ k * scale        # the scale forgotten then
        dk = None if frozen_keys else ds.transpose(-2, -1) @ q * scale
        dv = p.transpose(-2, -1) @ g if ctx.needs_input_grad[2] else None
        return dq, dk, dv, None


def attention(q, k, v, mask=None):
    return _Attention.apply(q, k, v, mask)
