"""NumPy parts whose weights are small objects, `Weight(data, gradient)`, each also listed in the
part's `self.params` (its optimizer walks that list), and whose sub-parts are listed in
`self.units` before they are set as attributes, the way a little framework with a `Block` base
class registers them. Every part has a hand-written backward that sets `.gradient`. Twins whose
docstring says BUG have one planted mistake."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Weight:
    data: np.ndarray
    gradient: np.ndarray | None = None

    def __post_init__(self):
        self.gradient = np.zeros_like(self.data)


class Unit:
    def __init__(self):
        self.params: list[Weight] = []
        self.units: list = []

    def own(self, name, value):
        w = Weight(np.asarray(value, dtype=np.float64))
        setattr(self, name, w)
        self.params.append(w)


class Dense(Unit):
    def __init__(self, n_in, n_out, rng):
        super().__init__()
        self.own("weight", rng.standard_normal((n_in, n_out)) / np.sqrt(n_in))
        self.own("bias", np.zeros(n_out))

    def forward(self, x):
        self.x = x
        return x @ self.weight.data + self.bias.data

    def backward(self, g):
        self.weight.gradient = self.x.reshape(-1, self.x.shape[-1]).T @ g.reshape(-1, g.shape[-1])
        self.bias.gradient = g.reshape(-1, g.shape[-1]).sum(axis=0)
        return g @ self.weight.data.T


class WeightObjectFeedForward(Unit):
    def __init__(self, d_model, d_ff, rng):
        super().__init__()
        self.up, self.down = Dense(d_model, d_ff, rng), Dense(d_ff, d_model, rng)
        self.units.extend([self.up, self.down])

    def forward(self, x):
        self.h = self.up.forward(x)
        return self.down.forward(np.maximum(self.h, 0.0))

    def backward(self, g):
        return self.up.backward(self.down.backward(g) * (self.h > 0))


class WeightObjectFeedForwardBUG(WeightObjectFeedForward):
    """BUG: the ReLU's backward lets the gradient through where the input was negative too."""

    def backward(self, g):
        return self.up.backward(self.down.backward(g))


class WeightObjectLayerNorm(Unit):
    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.own("scale", np.ones(d_model))
        self.own("shift", np.zeros(d_model))

    def forward(self, x):
        self.inv = 1.0 / np.sqrt(x.var(axis=-1, keepdims=True) + self.eps)
        self.xhat = (x - x.mean(axis=-1, keepdims=True)) * self.inv
        return self.xhat * self.scale.data + self.shift.data

    def backward(self, g):
        axes = tuple(range(g.ndim - 1))
        self.scale.gradient = (g * self.xhat).sum(axis=axes)
        self.shift.gradient = g.sum(axis=axes)
        gx = g * self.scale.data
        return self.inv * (gx - gx.mean(axis=-1, keepdims=True)
                           - self.xhat * (gx * self.xhat).mean(axis=-1, keepdims=True))


class WeightObjectLayerNormBUG(WeightObjectLayerNorm):
    """BUG: the backward divides by the standard deviation without the epsilon."""

    def forward(self, x):
        out = super().forward(x)
        self.sd = x.std(axis=-1, keepdims=True)
        return out

    def backward(self, g):
        dx = super().backward(g)
        return dx / (self.inv * self.sd)
