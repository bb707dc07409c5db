"""NumPy LayerNorms without a gain and shift (elementwise_affine=False): `(x - mean) / sqrt(var +
eps)` and its backward, one keeping its values for the backward in arrays its forward makes (`x2d`,
a flattened copy, as such code keeps). Twins whose docstring says BUG have one planted mistake."""
from __future__ import annotations

import numpy as np


class PlainLayerNorm:
    def __init__(self, eps=1e-5):
        self.eps = eps

    def forward(self, x):
        self.shape = x.shape
        self.x2d = x.reshape(-1, x.shape[-1])
        self.mean = self.x2d.mean(-1, keepdims=True)
        self.std = np.sqrt(self.x2d.var(-1, keepdims=True) + self.eps)
        self.xhat = (self.x2d - self.mean) / self.std
        return self.xhat.reshape(self.shape)

    def _centred(self, g):
        return g - g.mean(-1, keepdims=True)

    def backward(self, dy):
        g = dy.reshape(-1, dy.shape[-1])
        dx = (self._centred(g) - self.xhat * (g * self.xhat).mean(-1, keepdims=True)) / self.std
        return dx.reshape(self.shape)


class PlainLayerNormBUG(PlainLayerNorm):
    """BUG: the backward leaves out the mean's term."""

    def _centred(self, g):
        return g
