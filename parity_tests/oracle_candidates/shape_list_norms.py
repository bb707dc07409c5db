"""Layer norms built from a list or tuple of the normalised dimensions, `Norm(shape=[d_model])`,
as course code writes them after nn.LayerNorm's `normalized_shape`. Our own code; the BUG
variants plant one mistake each."""
from __future__ import annotations

import torch
from torch import nn


class ShapeListNorm(nn.Module):
    def __init__(self, dims, eps=1e-5):
        super().__init__()
        self.dims, self.eps = list(dims), eps
        self.scale = nn.Parameter(torch.ones(self.dims))
        self.shift = nn.Parameter(torch.zeros(self.dims))

    def forward(self, x):
        axes = tuple(range(-len(self.dims), 0))
        mu = x.mean(dim=axes, keepdim=True)
        var = ((x - mu) ** 2).mean(dim=axes, keepdim=True)
        return self.scale * (x - mu) / torch.sqrt(var + self.eps) + self.shift


class ShapeListNormBUG(ShapeListNorm):
    def forward(self, x):
        axes = tuple(range(-len(self.dims), 0))
        mu = x.mean(dim=axes, keepdim=True)
        var = ((x - mu) ** 2).mean(dim=axes, keepdim=True)
        return self.scale * (x - mu) / (torch.sqrt(var) + self.eps) + self.shift


class ShapeTupleNorm(nn.Module):
    def __init__(self, normalized_dims: tuple, eps: float = 1e-5):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(*normalized_dims))
        self.beta = nn.Parameter(torch.zeros(*normalized_dims))
        self.eps = eps

    def forward(self, x):
        mu = x.mean(-1, keepdim=True)
        var = x.var(-1, keepdim=True, unbiased=False)
        return self.gamma * (x - mu) / torch.sqrt(var + self.eps) + self.beta


class ShapeTupleNormBUG(ShapeTupleNorm):
    def forward(self, x):
        mu = x.mean(-1, keepdim=True)
        var = x.var(-1, keepdim=True, unbiased=True)
        return self.gamma * (x - mu) / torch.sqrt(var + self.eps) + self.beta


class AnnotatedWidthsNorm(nn.Module):
    def __init__(self, extent: list[int], eps: float = 1e-5):
        super().__init__()
        self.features = tuple(extent)
        self.w = nn.Parameter(torch.ones(self.features))
        self.b = nn.Parameter(torch.zeros(self.features))
        self.eps = eps

    def forward(self, x):
        return nn.functional.layer_norm(x, self.features, self.w, self.b, self.eps)
