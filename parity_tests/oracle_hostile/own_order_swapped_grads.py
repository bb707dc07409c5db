"""Hostile: a NumPy layer norm that states the order of its parameters (`self.params`, paired
with what backward returns by its own `step`) and returns the gain's and shift's gradients swapped
in that order: its own update moves the gain by the shift's gradient. Both have one shape."""
import numpy as np


class NormStatedOrderSwapped:
    def __init__(self, d_model, eps=1e-5):
        self.eps, self.gamma, self.beta = eps, np.ones(d_model), np.zeros(d_model)
        self.params = [self.gamma, self.beta]

    def forward(self, x):
        self.inv = 1.0 / np.sqrt(x.var(-1, keepdims=True) + self.eps)            # (..., 1)
        self.xhat = (x - x.mean(-1, keepdims=True)) * self.inv                    # (..., D)
        return self.gamma * self.xhat + self.beta

    def backward(self, dout):
        g = dout * self.gamma
        dx = self.inv * (g - g.mean(-1, keepdims=True)
                         - self.xhat * (g * self.xhat).mean(-1, keepdims=True))
        axes = tuple(range(dout.ndim - 1))
        return dx, dout.sum(axes), (dout * self.xhat).sum(axes)

    def step(self, grads, lr=0.1):
        for p, g in zip(self.params, grads):
            p -= lr * g
