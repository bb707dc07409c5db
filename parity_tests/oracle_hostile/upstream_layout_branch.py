"""Layer norms whose hand-written backward drops the input gradient's last term when the upstream
gradient is not C-contiguous (what autograd hands a custom Function after a transpose downstream,
or a NumPy caller passing a transposed view): a NumPy forward/backward pair and a torch module on a
custom autograd Function. Both matched: every upstream gradient was a fresh contiguous array."""
import numpy as np
import torch
from torch import nn


def layernorm_forward(x, gamma, beta, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    xhat = (x - mu) / np.sqrt(var + eps)
    return gamma * xhat + beta, (xhat, gamma, var, eps)


def layernorm_backward(dout, cache):
    xhat, gamma, var, eps = cache
    inv = 1.0 / np.sqrt(var + eps)
    lead = tuple(range(dout.ndim - 1))
    dxhat = dout * gamma
    dx = inv * (dxhat - dxhat.mean(-1, keepdims=True) - xhat * (dxhat * xhat).mean(-1, keepdims=True))
    if not dout.flags.c_contiguous:
        dx = inv * (dxhat - dxhat.mean(-1, keepdims=True))
    return dx, (dout * xhat).sum(axis=lead), dout.sum(axis=lead)


class _LN(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, g, b, eps):
        mu = x.mean(-1, keepdim=True)
        var = x.var(-1, keepdim=True, unbiased=False)
        xhat = (x - mu) / torch.sqrt(var + eps)
        ctx.save_for_backward(xhat, g, var)
        ctx.eps = eps
        return g * xhat + b

    @staticmethod
    def backward(ctx, dout):
        xhat, g, var = ctx.saved_tensors
        inv = 1.0 / torch.sqrt(var + ctx.eps)
        dxhat = dout * g
        dx = inv * (dxhat - dxhat.mean(-1, keepdim=True) - xhat * (dxhat * xhat).mean(-1, keepdim=True))
        if not dout.is_contiguous():
            dx = inv * (dxhat - dxhat.mean(-1, keepdim=True))
        lead = tuple(range(dout.ndim - 1))
        return dx, (dout * xhat).sum(lead), dout.sum(lead), None


class LayerNorm(nn.Module):
    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))
        self.eps = eps

    def forward(self, x):
        return _LN.apply(x, self.weight, self.bias, self.eps)
