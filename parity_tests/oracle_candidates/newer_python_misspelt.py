"""BUG: imports a name `typing` has in no Python version (`overide`, misspelt), beside a correct
LayerNorm: an import error that must not be blamed on the Python version."""
from __future__ import annotations

import torch
from torch import nn
from typing import overide as override


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
