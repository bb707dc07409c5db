"""NumPy modules built on a small `Module` base whose `__call__` runs `forward`, each part keeping
its gradients in a `gradients` dict under keys of its own (`dLdW`, `dLdScale`), the way NumPy
course code often does (test data for parity_tests/test_oracle_callable_grad_dicts.py). Weights are
(in, out). Each BUG twin differs in one gradient only; its forward is right."""
import numpy as np


class Module:
    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)


class Dense(Module):
    def __init__(self, n_in, n_out):
        self.W = np.random.default_rng(0).standard_normal((n_in, n_out)) * 0.1
        self.b = np.zeros(n_out)
        self.seen = {}
        self.gradients = {}

    def forward(self, x):
        self.seen["x"] = x
        return x @ self.W + self.b

    def backward(self, dy):
        x = self.seen["x"].reshape(-1, self.W.shape[0])
        flat = dy.reshape(-1, dy.shape[-1])
        self.gradients["dLdW"] = x.T @ flat
        self.gradients["dLdb"] = flat.sum(axis=0)
        self.gradients["dLdX"] = dy @ self.W.T
        return self.gradients["dLdX"]


class CallableFFN(Module):
    def __init__(self, d_model, d_ff):
        self.up = Dense(d_model, d_ff)
        self.down = Dense(d_ff, d_model)
        self.seen = {}

    def forward(self, x):
        h = self.up(x)
        self.seen["h"] = h
        return self.down(np.maximum(h, 0.0))

    def backward(self, dy):
        return self.up.backward(self.down.backward(dy) * (self.seen["h"] > 0))


class CallableFFNBadGrad(CallableFFN):
    """BUG: the ReLU's derivative is left out of the backward (the forward is right)."""

    def backward(self, dy):
        return self.up.backward(self.down.backward(dy))


class CallableNorm(Module):
    def __init__(self, width, eps=1e-5):
        self.eps = eps
        self.scale = np.ones(width)
        self.shift = np.zeros(width)
        self.seen = {}
        self.gradients = {}

    def forward(self, x):
        mu = x.mean(-1, keepdims=True)
        sd = np.sqrt(x.var(-1, keepdims=True) + self.eps)
        self.seen["xn"], self.seen["sd"] = (x - mu) / sd, sd
        return self.scale * self.seen["xn"] + self.shift

    def _dscale(self, dy):
        return np.sum(dy * self.seen["xn"], axis=(0, 1))

    def backward(self, dy):
        xn, sd = self.seen["xn"], self.seen["sd"]
        self.gradients["dLdScale"] = self._dscale(dy)
        self.gradients["dLdShift"] = np.sum(dy, axis=(0, 1))
        g = dy * self.scale
        self.gradients["dLdX"] = (g - g.mean(-1, keepdims=True)
                                  - xn * (g * xn).mean(-1, keepdims=True)) / sd
        return self.gradients["dLdX"]


class CallableNormBadGrad(CallableNorm):
    """BUG: the gain's gradient sums the upstream gradient only, without the normalised input."""

    def _dscale(self, dy):
        return np.sum(dy, axis=(0, 1))
