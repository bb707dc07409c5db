"""NumPy LayerNorms that bring their gain and shift to the input's rank inside forward, once
(`self.gamma = np.expand_dims(self.gamma, 0)` until it has as many axes as x): the values stay
those they were given. Twins whose docstring says BUG have one planted mistake."""
from __future__ import annotations

import numpy as np


class ExpandingLayerNorm:
    def __init__(self, d_model, eps=1e-5):
        self.gamma, self.beta = np.ones(d_model), np.zeros(d_model)
        self.eps = eps
        self.dgamma, self.dbeta = np.zeros(d_model), np.zeros(d_model)

    def _variance(self, x):
        return x.var(-1, keepdims=True)

    def forward(self, x):
        while self.gamma.ndim < x.ndim:
            self.gamma = self.gamma[np.newaxis]
            self.beta = np.expand_dims(self.beta, 0)
        self.inv = 1.0 / np.sqrt(self._variance(x) + self.eps)
        self.xhat = (x - x.mean(-1, keepdims=True)) * self.inv
        return self.xhat * self.gamma + self.beta

    def backward(self, dy):
        axes = tuple(range(dy.ndim - 1))
        self.dgamma = (dy * self.xhat).sum(axes)
        self.dbeta = dy.sum(axes)
        g, n = dy * self.gamma, dy.shape[-1]
        return self.inv / n * (n * g - g.sum(-1, keepdims=True)
                               - self.xhat * (g * self.xhat).sum(-1, keepdims=True))


class ExpandingLayerNormBUG(ExpandingLayerNorm):
    """BUG: the unbiased variance (divides by d_model - 1)."""

    def _variance(self, x):
        return x.var(-1, keepdims=True, ddof=1) if x.shape[-1] > 1 else x.var(-1, keepdims=True)


class ExpandingSteppingLayerNormBUG(ExpandingLayerNorm):
    """BUG: its backward also takes a gradient step on the gain it reshaped."""

    def backward(self, dy):
        dx = super().backward(dy)
        self.gamma = self.gamma - 0.1 * self.dgamma
        return dx
