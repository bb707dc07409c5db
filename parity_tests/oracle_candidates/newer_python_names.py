"""A correct LayerNorm written for Python 3.12: it marks its forward with `typing.override`, which
Python 3.11 does not have, so it cannot be imported there (its twin, newer_python_misspelt.py,
misspells the name: an import error in every Python, never blamed on the version)."""
from __future__ import annotations

import torch
from torch import nn
from typing import override


class Norm(nn.Module):
    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))
        self.eps = eps

    @override
    def forward(self, x):
        mu = x.mean(-1, keepdim=True)
        var = x.var(-1, keepdim=True, unbiased=False)
        return self.weight * (x - mu) / torch.sqrt(var + self.eps) + self.bias
