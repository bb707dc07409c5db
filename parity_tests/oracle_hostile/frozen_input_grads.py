"""A torch layer norm on a custom autograd.Function whose gain gradient drops the normalised input
(sums the upstream gradient alone) when its input needs no gradient (`ctx.needs_input_grad[0]`
False: a norm on a network's raw input features, or after a frozen layer). It matched: every main
run's inputs required gradients, and no mode compared parameter gradients without them."""
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
