"""NumPy layers whose backward returns its parameter gradients after the input gradient in an
order of its own: last layer first (`FeedForwardReturningLastFirst`, shapes that tell each
gradient's parameter), and a norm that leaves the gradients of its gain and shift summed over the
batch axis only (`NormReturningPerPositionBUG`, as a layer written for (T, D) inputs does on
(B, T, D) ones: its update sums them again). Our own code; wrong twins say BUG."""
from __future__ import annotations

import numpy as np


class FeedForwardReturningLastFirst:
    def __init__(self, d_model, d_ff):
        rng = np.random.default_rng(0)
        self.W1, self.b1 = rng.standard_normal((d_model, d_ff)), np.zeros(d_ff)
        self.W2, self.b2 = rng.standard_normal((d_ff, d_model)), np.zeros(d_model)

    def forward(self, x):
        self.x = x                                                     # (B, T, D)
        self.h = x @ self.W1 + self.b1                                 # (B, T, F)
        return np.maximum(self.h, 0.0) @ self.W2 + self.b2

    def _grads(self, dout):
        a = np.maximum(self.h, 0.0).reshape(-1, self.W2.shape[0])      # (B*T, F)
        d2 = dout.reshape(-1, self.W2.shape[1])                        # (B*T, D)
        dh = (dout @ self.W2.T) * (self.h > 0)                         # (B, T, F)
        dh2 = dh.reshape(-1, self.W1.shape[1])
        x2 = self.x.reshape(-1, self.W1.shape[0])
        return dh @ self.W1.T, x2.T @ dh2, dh2.sum(0), a.T @ d2, d2.sum(0)

    def backward(self, dout):
        dx, dW1, db1, dW2, db2 = self._grads(dout)
        return dx, db2, dW2, db1, dW1


class FeedForwardReturningLastFirstBUG(FeedForwardReturningLastFirst):
    """BUG: the second bias's gradient is averaged over the rows instead of summed."""

    def backward(self, dout):
        dx, dW1, db1, dW2, db2 = self._grads(dout)
        return dx, db2 / dout.shape[1], dW2, db1, dW1


class NormReturningPerPositionBUG:
    """BUG: dgamma and dbeta summed over the first axis only: (T, D) arrays for (B, T, D) inputs."""

    def __init__(self, d_model, eps=1e-5):
        self.eps, self.gamma, self.beta = eps, np.ones(d_model), np.zeros(d_model)

    def forward(self, x):
        self.inv = 1.0 / np.sqrt(x.var(-1, keepdims=True) + self.eps)            # (..., 1)
        self.xhat = (x - x.mean(-1, keepdims=True)) * self.inv                    # (..., D)
        return self.gamma * self.xhat + self.beta

    def backward(self, dout):
        g = dout * self.gamma
        dx = self.inv * (g - g.mean(-1, keepdims=True)
                         - self.xhat * (g * self.xhat).mean(-1, keepdims=True))
        return dx, (dout * self.xhat).sum(0), dout.sum(0)
