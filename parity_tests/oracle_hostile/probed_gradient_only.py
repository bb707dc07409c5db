"""Hostile (defended, kept as a regression): a NumPy feed-forward returning its parameter
gradients in an order of its own, `dx, db2, dW2, db1, dW1`, with dW1 transposed: right in shape
only where d_model = d_ff, where the finite-difference test must tell the two square arrays apart.
It places dW2 for W2 alone; dW1's wrong array goes to W1 by elimination and is compared there."""
import numpy as np


class FeedForwardTransposedFirstGradient:
    def __init__(self, d_model, d_ff):
        rng = np.random.default_rng(0)
        self.W1, self.b1 = rng.standard_normal((d_model, d_ff)), np.zeros(d_ff)
        self.W2, self.b2 = rng.standard_normal((d_ff, d_model)), np.zeros(d_model)

    def forward(self, x):
        self.x = x                                                     # (B, T, D)
        self.h = x @ self.W1 + self.b1                                 # (B, T, F)
        return np.maximum(self.h, 0.0) @ self.W2 + self.b2

    def backward(self, dout):
        a = np.maximum(self.h, 0.0).reshape(-1, self.W2.shape[0])      # (B*T, F)
        d2 = dout.reshape(-1, self.W2.shape[1])                        # (B*T, D)
        dh = (dout @ self.W2.T) * (self.h > 0)                         # (B, T, F)
        dh2 = dh.reshape(-1, self.W1.shape[1])
        x2 = self.x.reshape(-1, self.W1.shape[0])
        dW1 = x2.T @ dh2
        return dh @ self.W1.T, d2.sum(0), a.T @ d2, dh2.sum(0), dW1.T  # BUG: dW1 transposed
