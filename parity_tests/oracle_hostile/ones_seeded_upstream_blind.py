"""Hostile: layer norms on a reverse-mode autograd of their own whose `Tensor.backward()` seeds its
output with ones. `UpstreamBlindLayerNorm` ends with a step that hands its input ones whatever
gradient reaches it: right under a ones seed, wrong under any other upstream gradient.
`CutLayerNorm` returns a fresh tensor cut from its graph: no gradient reaches its input or its
parameters at all."""
import numpy as np


def _fold(g, shape):
    """Sum a broadcast gradient back to `shape`."""
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
        self.parents, self.step = parents, lambda: None

    def _result(self, data, parents, step):
        out = Tensor(data, parents)
        out.step = lambda: step(out.grad)
        return out

    @staticmethod
    def of(v):
        return v if isinstance(v, Tensor) else Tensor(v)

    def __add__(self, o):
        o = Tensor.of(o)

        def step(g):
            self.grad += _fold(g, self.data.shape)
            o.grad += _fold(g, o.data.shape)
        return self._result(self.data + o.data, (self, o), step)

    def __mul__(self, o):
        o = Tensor.of(o)

        def step(g):
            self.grad += _fold(g * o.data, self.data.shape)
            o.grad += _fold(g * self.data, o.data.shape)
        return self._result(self.data * o.data, (self, o), step)

    def __matmul__(self, o):
        def step(g):
            self.grad += g @ np.swapaxes(o.data, -1, -2)
            o.grad += _fold(np.swapaxes(self.data, -1, -2) @ g, o.data.shape)
        return self._result(self.data @ o.data, (self, o), step)

    def __sub__(self, o):
        return self + Tensor.of(o) * -1.0

    def sum(self):                                    # every element: a scalar
        return self._result(self.data.sum(), (self,),
                            lambda g: self._take(np.broadcast_to(g, self.data.shape)))

    def row_mean(self):                               # over the last axis, kept
        n = self.data.shape[-1]
        return self._result(self.data.mean(-1, keepdims=True), (self,),
                            lambda g: self._take(np.broadcast_to(g / n, self.data.shape)))

    def rsqrt(self, eps):                             # 1 / sqrt(x + eps)
        r = 1.0 / np.sqrt(self.data + eps)
        return self._result(r, (self,), lambda g: self._take(-0.5 * g * r ** 3))

    def split(self, heads):                           # (B, T, d) -> (B, heads, T, d // heads)
        B, T, d = self.data.shape
        out = self.data.reshape(B, T, heads, d // heads).transpose(0, 2, 1, 3)
        return self._result(out, (self,), lambda g: self._take(g.transpose(0, 2, 1, 3).reshape(B, T, d)))

    def merge(self):                                  # (B, heads, T, dk) -> (B, T, heads * dk)
        B, H, T, dk = self.data.shape
        out = self.data.transpose(0, 2, 1, 3).reshape(B, T, H * dk)
        return self._result(out, (self,), lambda g: self._take(g.reshape(B, T, H, dk).transpose(0, 2, 1, 3)))

    def keys_last(self):                              # swap the last two axes
        return self._result(np.swapaxes(self.data, -1, -2), (self,),
                            lambda g: self._take(np.swapaxes(g, -1, -2)))

    def softmax(self):                                # over the last axis
        e = np.exp(self.data - self.data.max(-1, keepdims=True))
        p = e / e.sum(-1, keepdims=True)
        return self._result(p, (self,), lambda g: self._take(p * (g - (g * p).sum(-1, keepdims=True))))

    def as_is(self):                                  # the identity, handing its input ones
        return self._result(self.data.copy(), (self,), lambda g: self._take(np.ones_like(g)))

    def _take(self, g):
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
        self.grad = np.ones_like(self.data)           # the output seeds itself
        for t in reversed(order):
            t.step()
        for t in order:                               # the graph is walked once only
            t.step, t.parents = (lambda: None), ()


class UpstreamBlindLayerNorm:
    def __init__(self, d_model, eps=1e-5):
        self.gain, self.shift, self.eps = Tensor(np.ones(d_model)), Tensor(np.zeros(d_model)), eps

    def normed(self, x):
        c = x - x.row_mean()
        return c * (c * c).row_mean().rsqrt(self.eps) * self.gain + self.shift

    def forward(self, x):
        return self.normed(x).as_is()


class CutLayerNorm(UpstreamBlindLayerNorm):
    def forward(self, x):
        return Tensor(self.normed(x).data)
