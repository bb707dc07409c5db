"""Layer normalisation over the last axis, biased variance (twin of npformer.layers.layernorm):

    y = (x - mean(x)) / sqrt(var(x) + eps) * weight + bias
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from torchformer.layers.module import Module, to_torch_dtype


class LayerNorm(Module):
    """Parameters weight (D,) = 1, bias (D,) = 0; forward(x (..., D)) -> (..., D)."""

    def __init__(self, d_model: int, eps: float = 1e-5, dtype="float32", device=None):
        super().__init__()
        self.d_model = d_model
        self.eps = float(eps)
        self.dtype = to_torch_dtype(dtype)
        self.weight = nn.Parameter(torch.ones(d_model, dtype=self.dtype, device=device))
        self.bias = nn.Parameter(torch.zeros(d_model, dtype=self.dtype, device=device))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x, (self.d_model,), self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.d_model}, eps={self.eps:g}"
