"""Reverse-mode autograd over NumPy: a Tensor records the operations made on it; backward(grad)
sends the upstream gradient back through them, summing over broadcast axes."""
import numpy as np


def _unbroadcast(g, shape):
    while g.ndim > len(shape):
        g = g.sum(0)
    for i, n in enumerate(shape):
        if n == 1 and g.shape[i] != 1:
            g = g.sum(i, keepdims=True)
    return g


class Tensor:
    def __init__(self, data, requires_grad=False, parents=(), back=None):
        self.data = np.asarray(data, dtype=float) if not isinstance(data, np.ndarray) else data
        self.requires_grad, self.grad = requires_grad, None
        self.parents, self.back = parents, back

    def accumulate(self, g):
        if self.requires_grad:
            g = _unbroadcast(g, self.data.shape)
            self.grad = g if self.grad is None else self.grad + g

    @staticmethod
    def lift(o):
        return o if isinstance(o, Tensor) else Tensor(np.asarray(o, dtype=float))

    def __add__(self, o):
        o = self.lift(o)
        return Tensor(self.data + o.data, True, (self, o), lambda g: (self.accumulate(g), o.accumulate(g)))

    def __sub__(self, o):
        o = self.lift(o)
        return Tensor(self.data - o.data, True, (self, o), lambda g: (self.accumulate(g), o.accumulate(-g)))

    def __mul__(self, o):
        o = self.lift(o)
        return Tensor(self.data * o.data, True, (self, o),
                      lambda g: (self.accumulate(g * o.data), o.accumulate(g * self.data)))

    def __truediv__(self, o):
        o = self.lift(o)
        return Tensor(self.data / o.data, True, (self, o),
                      lambda g: (self.accumulate(g / o.data), o.accumulate(-g * self.data / o.data ** 2)))

    def __matmul__(self, o):
        return Tensor(self.data @ o.data, True, (self, o),
                      lambda g: (self.accumulate(g @ np.swapaxes(o.data, -1, -2)),
                                 o.accumulate(np.swapaxes(self.data, -1, -2) @ g)))

    def backward(self, grad=None):
        order, seen = [], set()

        def visit(t):
            if id(t) not in seen:
                seen.add(id(t))
                for p in t.parents:
                    visit(p)
                order.append(t)
        visit(self)
        self.grad = np.ones_like(self.data) if grad is None else np.asarray(grad)
        for t in reversed(order):
            if t.back is not None:
                t.back(t.grad)


def mean(x, axis=-1):
    n = x.data.shape[axis]
    return Tensor(x.data.mean(axis, keepdims=True), True, (x,),
                  lambda g: x.accumulate(np.broadcast_to(g, x.data.shape) / n))


def sqrt(x):
    out = np.sqrt(x.data)
    return Tensor(out, True, (x,), lambda g: x.accumulate(g / (2 * out)))


def ones(n):
    return Tensor(np.ones(n), requires_grad=True)


def zeros(n):
    return Tensor(np.zeros(n), requires_grad=True)
