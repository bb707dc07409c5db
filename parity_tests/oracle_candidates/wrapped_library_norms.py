"""A LayerNorm class that only holds the library's (`self.norm = nn.LayerNorm(H, eps=eps)`) and
returns it applied, as BERT re-implementations wrap it to fix their eps. The twin whose docstring
says BUG has one planted mistake."""
from __future__ import annotations

import torch.nn as nn


class WrappedLayerNorm(nn.Module):
    def __init__(self, H, eps=1e-12):
        super().__init__()
        self.norm = nn.LayerNorm(H, eps=eps)

    def forward(self, x):
        return self.norm(x)


class WrappedLayerNormBUG(WrappedLayerNorm):
    """BUG: the input is added back after the norm (a residual inside the norm)."""

    def forward(self, x):
        return self.norm(x) + x
