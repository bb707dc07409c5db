"""Hostile: a NumPy feed-forward module whose backward returns the right gradients and then takes
an SGD step on its own parameters (training "for free"): every gradient and the first output match,
but the layer's weights are no longer the ones it was given (an optimizer then steps twice)."""
import numpy as np


class FeedForward:
    def __init__(self, d_model, d_ff):
        rng = np.random.default_rng(0)
        self.params = {"W1": rng.standard_normal((d_model, d_ff)) * 0.1, "b1": np.zeros(d_ff),
                       "W2": rng.standard_normal((d_ff, d_model)) * 0.1, "b2": np.zeros(d_model)}
        self.grads = {}

    def forward(self, x):
        p = self.params
        h = x @ p["W1"] + p["b1"]
        a = np.maximum(h, 0.0)
        self.cache = (x, h, a)
        return a @ p["W2"] + p["b2"]

    def backward(self, dout):
        x, h, a = self.cache
        p = self.params
        lead = tuple(range(dout.ndim - 1))
        g = self.grads
        g["W2"] = a.reshape(-1, a.shape[-1]).T @ dout.reshape(-1, dout.shape[-1])
        g["b2"] = dout.sum(axis=lead)
        dh = (dout @ p["W2"].T) * (h > 0)
        g["W1"] = x.reshape(-1, x.shape[-1]).T @ dh.reshape(-1, dh.shape[-1])
        g["b1"] = dh.sum(axis=lead)
        dx = dh @ p["W1"].T
        for k in p:
            p[k] = p[k] - 0.1 * g[k]            # a new array: the oracle's slot reads the old one
        return dx
