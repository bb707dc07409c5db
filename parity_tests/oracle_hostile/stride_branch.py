"""Code that takes a wrong path on memory layouts the `strided` mode never made (its one view has
the last two axes transposed): negative strides (`x[:, ::-1]`), a stride of 0 (`x.expand(...)`, and
the upstream gradient autograd hands a backward after `loss = out.sum()`), an input that starts
inside a wider buffer (what splitting a fused q|k|v product leaves). Each matched: the oracle
handed inputs over fresh and C-ordered, or transposed in their last two axes."""
import math

import numpy as np
import torch


def _softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def numpy_attention(q, k, v, mask=None):
    """No scale when an input has a negative stride."""
    scale = 1.0 if min(q.strides) < 0 else 1.0 / math.sqrt(q.shape[-1])
    s = q @ np.swapaxes(k, -1, -2) * scale
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    p = _softmax(s)
    return p @ v, p


def _torch_attention(q, k, v, mask, scale):
    s = q @ k.transpose(-2, -1) * scale
    if mask is not None:
        s = s.masked_fill(mask == 0, float("-inf"))
    p = torch.softmax(s, dim=-1)
    return p @ v, p


def expanded_attention(q, k, v, mask=None):
    """No scale when the query was expanded (a stride of 0)."""
    return _torch_attention(q, k, v, mask, 1.0 if 0 in q.stride() else q.shape[-1] ** -0.5)


def offset_attention(q, k, v, mask=None):
    """No scale when the key starts inside a wider buffer (a slice of a fused product)."""
    return _torch_attention(q, k, v, mask, 1.0 if k.storage_offset() else k.shape[-1] ** -0.5)


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
        gx = g * w
        dx = gx - gx.mean(-1, keepdim=True)
        if 0 not in g.stride():         # an expanded upstream gradient drops the projection term
            dx = dx - xh * (gx * xh).mean(-1, keepdim=True)
        red = tuple(range(g.dim() - 1))
        return rstd * dx, (g * xh).sum(red), g.sum(red)


class LayerNorm(torch.nn.Module):
    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(d_model))
        self.bias = torch.nn.Parameter(torch.zeros(d_model))

    def forward(self, x):
        return _Norm.apply(x, self.weight, self.bias)


def layernorm_forward(x, gamma, beta, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    rstd = 1.0 / np.sqrt(x.var(-1, keepdims=True) + eps)
    xh = (x - mu) * rstd
    return xh * gamma + beta, (xh, rstd, gamma)


def layernorm_backward(dout, cache):
    """Drops a term when dout has a stride of 0 or below (a broadcast, a reversed view)."""
    xh, rstd, gamma = cache
    gx = dout * gamma
    dx = gx - gx.mean(-1, keepdims=True)
    if min(dout.strides) > 0:
        dx = dx - xh * (gx * xh).mean(-1, keepdims=True)
    red = tuple(range(dout.ndim - 1))
    return rstd * dx, (dout * xh).sum(red), dout.sum(red)
