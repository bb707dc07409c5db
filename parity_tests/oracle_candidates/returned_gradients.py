"""NumPy layers whose backward RETURNS their parameter gradients instead of keeping them: a dict
after the input gradient (`NormReturningDict`, keys `<part>_<name>` in `FeedForwardReturningDict`),
arrays after it in registration order (`FeedForwardReturningTuple`) or in another order the names do
not tell (`NormReturningShiftFirst`). Our own code; the wrong twin says BUG."""
from __future__ import annotations

import numpy as np


class NormReturningDict:
    def __init__(self, d_model, eps=1e-5):
        self.eps, self.gamma, self.beta = eps, np.ones(d_model), np.zeros(d_model)

    def forward(self, x):
        self.inv = 1.0 / np.sqrt(x.var(-1, keepdims=True) + self.eps)            # (..., 1)
        self.xhat = (x - x.mean(-1, keepdims=True)) * self.inv                    # (..., D)
        return self.gamma * self.xhat + self.beta

    def _dx(self, dout):
        g = dout * self.gamma                                                     # dL/dxhat
        return self.inv * (g - g.mean(-1, keepdims=True)
                           - self.xhat * (g * self.xhat).mean(-1, keepdims=True))

    def _dparams(self, dout):
        axes = tuple(range(dout.ndim - 1))
        return (dout * self.xhat).sum(axes), dout.sum(axes)

    def backward(self, dout):
        dgamma, dbeta = self._dparams(dout)
        return self._dx(dout), {"gamma": dgamma, "beta": dbeta}


class NormReturningShiftFirst(NormReturningDict):
    def backward(self, dout):
        dgamma, dbeta = self._dparams(dout)
        return self._dx(dout), dbeta, dgamma


class Dense:
    def __init__(self, n_in, n_out, rng):
        self.W, self.b = rng.standard_normal((n_in, n_out)), np.zeros(n_out)

    def forward(self, x):
        self.x = x
        return x @ self.W + self.b

    def backward(self, dout):
        x2, d2 = self.x.reshape(-1, self.W.shape[0]), dout.reshape(-1, self.W.shape[1])
        return dout @ self.W.T, {"W": x2.T @ d2, "b": d2.sum(0)}


class FeedForwardReturningDict:
    def __init__(self, d_model, d_ff):
        rng = np.random.default_rng(0)
        self.up, self.down = Dense(d_model, d_ff, rng), Dense(d_ff, d_model, rng)

    def forward(self, x):
        self.h = self.up.forward(x)
        return self.down.forward(np.maximum(self.h, 0.0))

    def backward(self, dout):
        dh, g_down = self.down.backward(dout)
        dx, g_up = self.up.backward(dh * (self.h > 0))
        grads = {f"up_{k}": v for k, v in g_up.items()}
        grads.update({f"down_{k}": v for k, v in g_down.items()})
        return dx, grads


class FeedForwardReturningDictBUG(FeedForwardReturningDict):
    """BUG: the first weight's gradient is averaged over the batch."""

    def backward(self, dout):
        dx, grads = super().backward(dout)
        grads["up_W"] = grads["up_W"] / dout.shape[0]
        return dx, grads


class FeedForwardReturningTuple(FeedForwardReturningDict):
    def backward(self, dout):
        dh, g_down = self.down.backward(dout)
        dx, g_up = self.up.backward(dh * (self.h > 0))
        return dx, g_up["W"], g_up["b"], g_down["W"], g_down["b"]


class NormReturningTwoSpellingsBUG(NormReturningDict):
    """BUG: two keys name the gain's gradient, with different arrays (a debugging copy kept halved)."""

    def backward(self, dout):
        dgamma, dbeta = self._dparams(dout)
        return self._dx(dout), {"gamma": dgamma, "dgamma": 0.5 * dgamma, "beta": dbeta}


def norm_forward(x, gamma, beta, eps=1e-5):
    layer = NormReturningDict(x.shape[-1], eps)
    layer.gamma, layer.beta = gamma, beta
    return layer.forward(x), layer


def norm_backward_two_spellings_BUG(dout, layer):
    """BUG: the dict holds the gain's gradient twice, under `gamma` and `dgamma`, different."""
    dgamma, dbeta = layer._dparams(dout)
    dx = layer._dx(dout)
    return {"x": dx, "gamma": dgamma, "beta": dbeta, "dgamma": 0.5 * dgamma, "dbeta": dbeta}
