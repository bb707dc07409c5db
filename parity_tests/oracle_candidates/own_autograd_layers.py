"""Layers built on a small reverse-mode autograd of their own, as learners write after micrograd
(test data for parity_tests/test_oracle_own_autograd.py): a `Tensor` holding `.data` and `.grad`,
operators that record the graph, `backward(grad)`; the layers take and return such tensors and have
no backward method. The twins plant a bug (eps outside the square root, a missing bias, a ReLU
whose gradient lets negatives through)."""
import numpy as np


def _unbroadcast(g, shape):
    while g.ndim > len(shape):
        g = g.sum(0)
    for i, n in enumerate(shape):
        if n == 1 and g.shape[i] != 1:
            g = g.sum(i, keepdims=True)
    return g


class Tensor:
    def __init__(self, data, requires_grad=False, _parents=()):
        self.data = np.asarray(data, dtype=float) if not isinstance(data, np.ndarray) else data
        self.requires_grad, self.grad = requires_grad, None
        self._parents, self._back = _parents, None

    def _make(self, data, parents, back):
        out = Tensor(data, any(p.requires_grad for p in parents), parents)
        out._back = back
        return out

    def _accumulate(self, g):
        if self.requires_grad:
            g = _unbroadcast(g, self.data.shape)
            self.grad = g if self.grad is None else self.grad + g

    @staticmethod
    def _lift(o):
        return o if isinstance(o, Tensor) else Tensor(np.asarray(o, dtype=float))

    def __add__(self, o):
        o = self._lift(o)
        return self._make(self.data + o.data, (self, o), lambda g: (self._accumulate(g), o._accumulate(g)))

    __radd__ = __add__

    def __neg__(self):
        return self * -1.0

    def __sub__(self, o):
        return self + (-self._lift(o))

    def __mul__(self, o):
        o = self._lift(o)
        return self._make(self.data * o.data, (self, o),
                          lambda g: (self._accumulate(g * o.data), o._accumulate(g * self.data)))

    __rmul__ = __mul__

    def __pow__(self, k):
        return self._make(self.data ** k, (self,), lambda g: self._accumulate(g * k * self.data ** (k - 1)))

    def __truediv__(self, o):
        return self * (self._lift(o) ** -1.0)

    def __matmul__(self, o):
        return self._make(self.data @ o.data, (self, o),
                          lambda g: (self._accumulate(g @ np.swapaxes(o.data, -1, -2)),
                                     o._accumulate(np.swapaxes(self.data, -1, -2) @ g)))

    def mean(self, axis=-1, keepdims=True):
        n = self.data.shape[axis]
        return self._make(self.data.mean(axis, keepdims=keepdims), (self,),
                          lambda g: self._accumulate(np.broadcast_to(g, self.data.shape) / n))

    def relu(self, leak_grad=False):
        keep = self.data > 0
        return self._make(self.data * keep, (self,),
                          lambda g: self._accumulate(g if leak_grad else g * keep))

    def backward(self, grad=None):
        order, seen = [], set()

        def visit(t):
            if id(t) not in seen:
                seen.add(id(t))
                for p in t._parents:
                    visit(p)
                order.append(t)
        visit(self)
        self.grad = np.ones_like(self.data) if grad is None else np.asarray(grad)
        for t in reversed(order):
            if t._back is not None:
                t._back(t.grad)


class TinyLayerNorm:
    def __init__(self, d_model, eps=1e-5):
        self.weight = Tensor(np.ones(d_model), requires_grad=True)
        self.bias = Tensor(np.zeros(d_model), requires_grad=True)
        self.eps = eps

    def _spread(self, centred):
        return ((centred ** 2).mean() + self.eps) ** 0.5

    def forward(self, x):
        centred = x - x.mean()
        return centred / self._spread(centred) * self.weight + self.bias


class TinyLayerNormEpsOutside(TinyLayerNorm):
    """BUG: eps added to the standard deviation."""

    def _spread(self, centred):
        return (centred ** 2).mean() ** 0.5 + self.eps


class TinyFeedForward:
    LEAK = False

    def __init__(self, d_model, d_ff):
        rng = np.random.default_rng(0)
        self.w1 = Tensor(rng.standard_normal((d_model, d_ff)) * 0.5, requires_grad=True)
        self.b1 = Tensor(rng.standard_normal(d_ff) * 0.1, requires_grad=True)
        self.w2 = Tensor(rng.standard_normal((d_ff, d_model)) * 0.5, requires_grad=True)
        self.b2 = Tensor(rng.standard_normal(d_model) * 0.1, requires_grad=True)

    def forward(self, x):
        return (x @ self.w1 + self.b1).relu(leak_grad=self.LEAK) @ self.w2 + self.b2


class TinyFeedForwardLeakyGrad(TinyFeedForward):
    """BUG: the ReLU's gradient lets negative pre-activations through (only the gradients differ)."""

    LEAK = True
