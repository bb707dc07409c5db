"""Right code that rounds otherwise than the reference: each differs from it by float64 rounding
only, amplified where the inputs make the arithmetic ill-conditioned (large attention scores, rows
of tiny spread). The oracle must give each MATCH on every secret, in every mode."""
import math

import torch
from torch import nn


def attention_log_sum_exp(q, k, v, mask=None):
    """Correct: q scaled before the product, weights exp(s - logsumexp(s)) (no division)."""
    s = (q / math.sqrt(q.shape[-1])) @ k.transpose(-2, -1)
    if mask is not None:
        s = s.masked_fill(mask == 0, float("-inf"))
    w = torch.exp(s - torch.logsumexp(s, dim=-1, keepdim=True))
    return w @ v, w


class OnePassVarianceNorm(nn.Module):
    """Correct: the variance as E[x^2] - E[x]^2 in one pass (cancels on rows of tiny spread)."""

    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))
        self.eps = eps

    def forward(self, x):
        m = x.mean(-1, keepdim=True)
        var = (x * x).mean(-1, keepdim=True) - m * m
        return self.weight * (x - m) * torch.rsqrt(var + self.eps) + self.bias


def attention_log_sum_exp_wrong_scale(q, k, v, mask=None):
    """BUG: divides the scores by d_k instead of sqrt(d_k)."""
    s = (q / q.shape[-1]) @ k.transpose(-2, -1)
    if mask is not None:
        s = s.masked_fill(mask == 0, float("-inf"))
    w = torch.exp(s - torch.logsumexp(s, dim=-1, keepdim=True))
    return w @ v, w


class OnePassVarianceNormWrongEps(OnePassVarianceNorm):
    """BUG: adds 1e-6 where the module says 1e-5."""

    def forward(self, x):
        m = x.mean(-1, keepdim=True)
        var = (x * x).mean(-1, keepdim=True) - m * m
        return self.weight * (x - m) * torch.rsqrt(var + 1e-6) + self.bias
