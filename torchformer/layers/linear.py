"""Linear layer, torch layout: y = x @ W.T + b, W (out_features, in_features) (twin of npformer.layers.linear).

Initialisation as npformer: Xavier-uniform weight, zero bias; `rng` may be a torch.Generator (CPU) or
a numpy Generator (then the draws are numpy's). Exact values do not matter for parity: the bridge
copies weights.
"""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from torchformer.layers.module import Module, to_torch_dtype


def draw_uniform(shape, bound: float, rng, dtype: torch.dtype, device) -> torch.Tensor:
    """U(-bound, bound) of `shape` from a torch.Generator (CPU), a numpy Generator, or the global
    torch RNG (rng None); drawn in float64 on the CPU, then cast and moved."""
    if isinstance(rng, np.random.Generator):
        t = torch.from_numpy(rng.uniform(-bound, bound, size=tuple(shape)))
    else:
        t = torch.empty(tuple(shape), dtype=torch.float64).uniform_(-bound, bound, generator=rng)
    return t.to(device=device, dtype=dtype)


def draw_normal(shape, std: float, rng, dtype: torch.dtype, device) -> torch.Tensor:
    """N(0, std^2) of `shape`, with the same rng conventions as draw_uniform."""
    if isinstance(rng, np.random.Generator):
        t = torch.from_numpy(rng.normal(0.0, std, size=tuple(shape)))
    else:
        t = torch.empty(tuple(shape), dtype=torch.float64).normal_(0.0, std, generator=rng)
    return t.to(device=device, dtype=dtype)


class Linear(Module):
    """y = x W^T + b on the last axis.

    Args: in_features I, out_features O, bias, dtype ("float32"/"float64"), rng, device.
    Parameters: weight (O, I), bias (O,) (absent when bias=False).
    forward(x (..., I)) -> (..., O).
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, dtype="float32",
                 rng=None, device=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.dtype = to_torch_dtype(dtype)
        bound = math.sqrt(6.0 / (in_features + out_features))              # Xavier-uniform
        self.weight = nn.Parameter(draw_uniform((out_features, in_features), bound, rng,
                                                self.dtype, device))
        if bias:
            self.bias = nn.Parameter(torch.zeros(out_features, dtype=self.dtype, device=device))
        else:
            self.register_parameter("bias", None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.weight, self.bias)                         # (..., O)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}, dtype={self.weight.dtype}")
