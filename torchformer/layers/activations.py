"""Elementwise activations (twin of npformer.layers.activations):

    relu(x)      = max(0, x)
    gelu(x)      = x * Phi(x) = x/2 * (1 + erf(x / sqrt(2)))                        (exact)
    gelu_tanh(x) = x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))                (GPT-2)
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from torchformer.layers import compile_ops
from torchformer.layers.module import Module, compiling


def relu(x: torch.Tensor) -> torch.Tensor:
    return F.relu(x)


def gelu(x: torch.Tensor) -> torch.Tensor:
    return F.gelu(x)


def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    return F.gelu(x, approximate="tanh")


ACTIVATIONS = {"relu": relu, "gelu": gelu, "gelu_tanh": gelu_tanh}


class Activation(Module):
    """The activation `name` ("relu", "gelu" or "gelu_tanh") as a module without parameters."""

    def __init__(self, name: str):
        super().__init__()
        self.name = name
        self.fn = ACTIVATIONS[name]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.fn is relu and x.requires_grad and x.device.type == "cpu" and compiling():
            return compile_ops.relu(x)              # see torchformer/compile_ops.py (backward only)
        return self.fn(x)

    def extra_repr(self) -> str:
        return self.name
