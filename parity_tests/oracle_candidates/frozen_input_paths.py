"""Right code whose backward takes another path when its input needs no gradient, as the hostile
twin oracle_hostile/frozen_input_grads.py does: a layer norm on a custom autograd.Function that
skips the input gradient's work then (`ctx.needs_input_grad[0]` False) and still gives the gain and
shift gradients, and one that tests `x.requires_grad` to choose torch's own functional layer norm
or its own arithmetic; an attention on a custom autograd.Function computing only the input
gradients asked for. Each must match."""
import math

import torch
from torch import nn
from torch.nn import functional as F


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
        d = xh.shape[-1]
        dx = None
        if ctx.needs_input_grad[0]:
            dxh = g * gamma
            dx = inv * (dxh - dxh.mean(-1, keepdim=True) - xh * (dxh * xh).mean(-1, keepdim=True))
        return dx, (g * xh).reshape(-1, d).sum(0), g.reshape(-1, d).sum(0), None


class LayerNorm(nn.Module):
    """forward(x) on a custom autograd.Function; no input-gradient work for a frozen input."""

    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))
        self.eps = eps

    def forward(self, x):
        return _Norm.apply(x, self.weight, self.bias, self.eps)


class BranchingLayerNorm(nn.Module):
    """forward(x): F.layer_norm when x needs no gradient, its own arithmetic when it does."""

    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))
        self.eps = eps

    def forward(self, x):
        if not x.requires_grad:
            return F.layer_norm(x, x.shape[-1:], self.weight, self.bias, self.eps)
        mu = x.mean(-1, keepdim=True)
        var = ((x - mu) ** 2).mean(-1, keepdim=True)
        return self.weight * (x - mu) / torch.sqrt(var + self.eps) + self.bias


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
        need = ctx.needs_input_grad
        dp = g @ v.transpose(-2, -1)
        ds = p * (dp - (dp * p).sum(-1, keepdim=True)) / math.sqrt(q.shape[-1])
        return (ds @ k if need[0] else None, ds.transpose(-2, -1) @ q if need[1] else None,
                p.transpose(-2, -1) @ g if need[2] else None, None)


def attention(q, k, v, mask=None):
    """forward(q, k, v, mask) -> output; only the gradients autograd asks for."""
    return _Attention.apply(q, k, v, mask)
