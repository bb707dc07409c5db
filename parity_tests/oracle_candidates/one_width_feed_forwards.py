"""Feed-forwards whose constructor takes one width under a name no alias list holds: the model
width (`FeedForward(layer_dim, expansion=4)`, NumPy with its own backward; a torch
`Block(units)`), or the hidden width beside a model width the file fixes (`MLP(inner)` with
`WIDTH = 16` at the top). Twins whose docstring says BUG have one planted mistake."""
from __future__ import annotations

import numpy as np
import torch
import torch.nn as nn

WIDTH = 16


class _Dense:
    def __init__(self, n_in, n_out):
        self.W = np.random.default_rng(0).standard_normal((n_in, n_out)) * 0.1
        self.b = np.zeros(n_out)

    def forward(self, x):
        self.x = x
        return x @ self.W + self.b

    def backward(self, d):
        self.dW = np.tensordot(self.x, d, axes=(list(range(d.ndim - 1)),) * 2)
        self.db = d.reshape(-1, d.shape[-1]).sum(0)
        return d @ self.W.T


class LayerDimFeedForward:
    def __init__(self, layer_dim, expansion=4):
        self.up = _Dense(layer_dim, layer_dim * expansion)
        self.down = _Dense(layer_dim * expansion, layer_dim)

    def forward(self, x):
        self.h = self.up.forward(x)
        return self.down.forward(np.maximum(self.h, 0))

    def backward(self, d):
        return self.up.backward(self.down.backward(d) * (self.h > 0))


class LayerDimFeedForwardBUG(LayerDimFeedForward):
    """BUG: the activation's gradient lets negative pre-activations through."""

    def backward(self, d):
        return self.up.backward(self.down.backward(d) * (self.h >= -1e9))


class UnitsBlock(nn.Module):
    def __init__(self, units):
        super().__init__()
        self.fc_in, self.fc_out = nn.Linear(units, 2 * units), nn.Linear(2 * units, units)

    def forward(self, x):
        return self.fc_out(torch.relu(self.fc_in(x)))


class UnitsBlockBUG(UnitsBlock):
    """BUG: no activation between the two layers."""

    def forward(self, x):
        return self.fc_out(self.fc_in(x))


class FixedWidthMLP(nn.Module):
    """Its one argument is the hidden width; the model width is the file's WIDTH."""

    def __init__(self, inner):
        super().__init__()
        self.fc_in, self.fc_out = nn.Linear(WIDTH, inner), nn.Linear(inner, WIDTH)

    def forward(self, x):
        return self.fc_out(torch.relu(self.fc_in(x)))
