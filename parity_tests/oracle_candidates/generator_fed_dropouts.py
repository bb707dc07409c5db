"""NumPy feed-forward blocks whose constructor hands its random generator to its dropout by keyword
(`Dropout(dropout, rng=rng)`, `rng=None` meaning "make one"), as NumPy packages holding
`Parameter(.data, .grad)` objects write them: the generator is no dropout rate. A correct version and
a twin whose docstring says BUG."""
from __future__ import annotations

import numpy as np


class Dropout:
    def __init__(self, rate=0.5, *, rng=None):
        self.rate = float(rate)
        self.rng = rng if rng is not None else np.random.default_rng()
        self.training = True
        self._mask = None

    def forward(self, x):
        if not self.training or self.rate == 0.0:
            self._mask = None
            return x
        self._mask = (self.rng.random(x.shape) >= self.rate) / (1.0 - self.rate)
        return x * self._mask

    def backward(self, dout):
        return dout if self._mask is None else dout * self._mask


class GeneratorFedFFN:
    def __init__(self, d_model, d_ff, dropout=0.1, *, rng=None):
        rng = rng if rng is not None else np.random.default_rng(0)
        self.W1 = rng.standard_normal((d_ff, d_model)) * 0.3
        self.b1 = np.zeros(d_ff)
        self.W2 = rng.standard_normal((d_model, d_ff)) * 0.3
        self.b2 = np.zeros(d_model)
        self.drop = Dropout(dropout, rng=rng)
        self.grads = {}

    def _act(self, h):
        return np.maximum(h, 0.0)

    def forward(self, x):
        h = x @ self.W1.T + self.b1
        a = self.drop.forward(self._act(h))
        self._cache = (x, h, a)
        return a @ self.W2.T + self.b2

    def backward(self, dout):
        x, h, a = self._cache
        flat = lambda t: t.reshape(-1, t.shape[-1])  # noqa: E731
        self.grads = {"W2": flat(dout).T @ flat(a), "b2": flat(dout).sum(0)}
        dh = self.drop.backward(dout @ self.W2) * (h > 0)
        self.grads.update({"W1": flat(dh).T @ flat(x), "b1": flat(dh).sum(0)})
        return dh @ self.W1


class GeneratorFedFFNLeaky(GeneratorFedFFN):
    """BUG: a leaky ReLU (slope 0.01 below zero), not ReLU, in the forward and the backward."""

    def _act(self, h):
        return np.where(h > 0, h, 0.01 * h)

    def backward(self, dout):
        x, h, a = self._cache
        flat = lambda t: t.reshape(-1, t.shape[-1])  # noqa: E731
        self.grads = {"W2": flat(dout).T @ flat(a), "b2": flat(dout).sum(0)}
        dh = self.drop.backward(dout @ self.W2) * np.where(h > 0, 1.0, 0.01)
        self.grads.update({"W1": flat(dh).T @ flat(x), "b1": flat(dh).sum(0)})
        return dh @ self.W1
