"""NumPy layers that keep every weight private: Parameter objects (.data, .grad) under `_names`,
parts under `_names` too, a `parameters()` list for the optimiser; backward returns the input's
gradient and adds the weights' into `.grad`. Each right class has a planted-bug twin (BUG)."""
import numpy as np


class Param:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class _Affine:
    def __init__(self, n_in, n_out):
        self._W = Param(np.random.randn(n_in, n_out) / np.sqrt(n_in))
        self._b = Param(np.zeros(n_out))

    def parameters(self):
        return [self._W, self._b]

    def forward(self, x):
        self._x = x
        return x @ self._W.data + self._b.data

    def backward(self, g):
        self._W.grad += self._x.reshape(-1, self._x.shape[-1]).T @ g.reshape(-1, g.shape[-1])
        self._b.grad += g.reshape(-1, g.shape[-1]).sum(0)
        return g @ self._W.data.T


class HiddenLayerNorm:
    def __init__(self, d_model):
        self._gamma = Param(np.ones(d_model))
        self._beta = Param(np.zeros(d_model))

    def parameters(self):
        return [self._gamma, self._beta]

    def forward(self, x):
        mu = x.mean(-1, keepdims=True)
        self._inv = 1.0 / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
        self._xhat = (x - mu) * self._inv
        return self._xhat * self._gamma.data + self._beta.data

    def backward(self, g):
        xh = self._xhat
        flat = g.reshape(-1, g.shape[-1])
        self._gamma.grad += (flat * xh.reshape(flat.shape)).sum(0)
        self._beta.grad += flat.sum(0)
        gx = g * self._gamma.data
        return self._inv * (gx - gx.mean(-1, keepdims=True) - xh * (gx * xh).mean(-1, keepdims=True))


class HiddenLayerNormBUG(HiddenLayerNorm):
    def backward(self, g):
        dx = super().backward(g)
        self._beta.grad *= 2.0                    # the shift's gradient counted twice
        return dx


class HiddenFeedForward:
    def __init__(self, d_model, d_ff):
        self._inner = _Affine(d_model, d_ff)
        self._outer = _Affine(d_ff, d_model)

    def parameters(self):
        return self._inner.parameters() + self._outer.parameters()

    def forward(self, x):
        self._h = self._inner.forward(x)
        return self._outer.forward(np.maximum(self._h, 0.0))

    def backward(self, g):
        return self._inner.backward(self._outer.backward(g) * (self._h > 0))


class HiddenFeedForwardBUG(HiddenFeedForward):
    def forward(self, x):
        self._h = self._inner.forward(x)
        return self._outer.forward(np.maximum(self._h, 0.0) * 1.01)     # a stray scale
