"""LayerNorms whose epsilon is 1e-12 (as BERT-family code fixes it): the library's own, correct, and
a hand-written one whose BUG is the unbiased variance."""
from __future__ import annotations

import torch
from torch import nn


class TinyEpsLayerNorm(nn.LayerNorm):
    """Correct: torch's LayerNorm with eps 1e-12."""

    def __init__(self, d_model):
        super().__init__(d_model, eps=1e-12)


class TinyEpsUnbiasedNorm(nn.Module):
    """BUG: divides by the unbiased variance (d_model - 1)."""

    def __init__(self, d_model):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))

    def forward(self, x):
        centred = x - x.mean(-1, keepdim=True)
        var = centred.pow(2).sum(-1, keepdim=True) / (x.shape[-1] - 1)
        return self.weight * centred / torch.sqrt(var + 1e-12) + self.bias
