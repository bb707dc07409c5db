"""A LayerNorm on a reverse-mode autograd of its own whose `Tensor.backward()` takes no gradient: the
caller writes the upstream gradient into the output's `.grad` first, and every tensor starts with a
zero gradient array its operators add into (test data for
parity_tests/test_oracle_seeded_autograd.py). The twin multiplies by the gain's bare array, so no
gradient reaches the gain."""
import numpy as np


def _unbroadcast(g, shape):
    while g.ndim > len(shape):
        g = g.sum(0)
    for i, n in enumerate(shape):
        if n == 1 and g.shape[i] != 1:
            g = g.sum(i, keepdims=True)
    return g


class Tensor:
    def __init__(self, data, parents=()):
        self.data = np.asarray(data, dtype=float)
        self.grad = np.zeros_like(self.data)
        self.parents, self._back = parents, lambda: None

    def _node(self, data, parents, back):
        out = Tensor(data, parents)
        out._back = lambda: back(out.grad)
        return out

    @staticmethod
    def lift(v):
        return v if isinstance(v, Tensor) else Tensor(v)

    def __add__(self, o):
        o = Tensor.lift(o)

        def back(g):
            self.grad += _unbroadcast(g, self.data.shape)
            o.grad += _unbroadcast(g, o.data.shape)
        return self._node(self.data + o.data, (self, o), back)

    def __mul__(self, o):
        o = Tensor.lift(o)

        def back(g):
            self.grad += _unbroadcast(g * o.data, self.data.shape)
            o.grad += _unbroadcast(g * self.data, o.data.shape)
        return self._node(self.data * o.data, (self, o), back)

    def __matmul__(self, o):
        def back(g):
            self.grad += g @ np.swapaxes(o.data, -1, -2)
            o.grad += _unbroadcast(np.swapaxes(self.data, -1, -2) @ g, o.data.shape)
        return self._node(self.data @ o.data, (self, o), back)

    def __sub__(self, o):
        return self + Tensor.lift(o) * -1.0

    def mean(self):                                   # over the last axis, kept
        n = self.data.shape[-1]
        return self._node(self.data.mean(-1, keepdims=True), (self,),
                          lambda g: self._add_grad(np.broadcast_to(g / n, self.data.shape)))

    def rsqrt(self, eps):                             # 1 / sqrt(x + eps)
        r = 1.0 / np.sqrt(self.data + eps)
        return self._node(r, (self,), lambda g: self._add_grad(-0.5 * g * r ** 3))

    def _add_grad(self, g):
        self.grad += g

    def backward(self):
        order, seen = [], set()

        def visit(t):
            if id(t) not in seen:
                seen.add(id(t))
                for p in t.parents:
                    visit(p)
                order.append(t)
        visit(self)
        for t in reversed(order):
            t._back()


class SeededLayerNorm:
    GAIN_TRACKED = True

    def __init__(self, d_model, eps=1e-5):
        self.gain, self.shift, self.eps = Tensor(np.ones(d_model)), Tensor(np.zeros(d_model)), eps

    def forward(self, x):
        c = x - x.mean()
        xhat = c * (c * c).mean().rsqrt(self.eps)
        return xhat * (self.gain if self.GAIN_TRACKED else self.gain.data) + self.shift


class SeededLayerNormGainUntracked(SeededLayerNorm):
    """BUG: the gain enters as its bare array, so no gradient reaches it."""

    GAIN_TRACKED = False
