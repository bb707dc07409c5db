"""A NumPy feed-forward that lists its weights for its optimiser, `self.params = [self.W1, self.b1,
self.W2, self.b2]`, and whose backward sets `self.grads` to a list in the same order. The right class
has a planted-bug twin (BUG)."""
import numpy as np


class ListedFeedForward:
    def __init__(self, d_model, d_ff):
        self.W1, self.b1 = np.random.randn(d_model, d_ff), np.random.randn(d_ff)
        self.W2, self.b2 = np.random.randn(d_ff, d_model), np.random.randn(d_model)
        self.params = [self.W1, self.b1, self.W2, self.b2]

    def forward(self, x):
        self.x, self.h = x, x @ self.W1 + self.b1
        return np.maximum(self.h, 0) @ self.W2 + self.b2

    def backward(self, g):
        a = np.maximum(self.h, 0)
        dh = (g @ self.W2.T) * (self.h > 0)
        flat = lambda t: t.reshape(-1, t.shape[-1])      # noqa: E731
        self.grads = [flat(self.x).T @ flat(dh), flat(dh).sum(0), flat(a).T @ flat(g), flat(g).sum(0)]
        return dh @ self.W1.T


class ListedFeedForwardBUG(ListedFeedForward):
    def backward(self, g):
        dx = super().backward(g)
        self.grads[1] = self.grads[1] / g.shape[0]         # the first bias's gradient averaged
        return dx
