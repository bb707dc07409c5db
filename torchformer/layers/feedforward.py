"""Position-wise feed-forward network FFN(x) = linear2(dropout(activation(linear1(x))))
(Vaswani et al. 2017, eq. 2), twin of npformer.layers.feedforward."""
from __future__ import annotations

import torch

from torchformer.layers.activations import Activation
from torchformer.layers.dropout import Dropout
from torchformer.layers.linear import Linear
from torchformer.layers.module import Module, to_torch_dtype


class PositionwiseFeedForward(Module):
    """Children: linear1 (D -> F), activation, dropout (after the activation), linear2 (F -> D).
    forward(x (B, T, D)) -> (B, T, D)."""

    def __init__(self, d_model: int, d_ff: int, activation: str = "relu", dropout: float = 0.0,
                 bias: bool = True, dtype="float32", rng=None, device=None):
        super().__init__()
        self.d_model = d_model
        self.dtype = to_torch_dtype(dtype)
        self.linear1 = Linear(d_model, d_ff, bias=bias, dtype=dtype, rng=rng, device=device)
        self.activation = Activation(activation)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(d_ff, d_model, bias=bias, dtype=dtype, rng=rng, device=device)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.activation(self.linear1(x))        # (B, T, F)
        return self.linear2(self.dropout(h))        # (B, T, D)
