"""A NumPy feed-forward that takes a copy of its first weight at its first forward ("for speed") and
uses the copy ever after: right on a fresh instance, stale after any weight update (an optimizer
step writes the weights in place), so it never trains that weight. It matched: every call the
oracle compared ran on the weights the first call saw. The right twin (a copy rebuilt when the
weight changes) is oracle_candidates/cached_weight_products.py."""
import numpy as np


class FeedForward:
    """NumPy, weights stored (in, out): check with --weight-layout in_out."""

    def __init__(self, d_model, d_ff):
        rng = np.random.default_rng(0)
        self.params = {"W1": rng.standard_normal((d_model, d_ff)) * 0.1, "b1": np.zeros(d_ff),
                       "W2": rng.standard_normal((d_ff, d_model)) * 0.1, "b2": np.zeros(d_model)}
        self.grads = {}
        self._W1 = None

    def forward(self, x):
        p = self.params
        if self._W1 is None:
            self._W1 = p["W1"].copy()
        h = x @ self._W1 + p["b1"]
        a = np.maximum(h, 0.0)
        self.cache = (x, h, a)
        return a @ p["W2"] + p["b2"]

    def backward(self, dout):
        x, h, a = self.cache
        p = self.params
        lead = tuple(range(dout.ndim - 1))
        self.grads["W2"] = a.reshape(-1, a.shape[-1]).T @ dout.reshape(-1, dout.shape[-1])
        self.grads["b2"] = dout.sum(axis=lead)
        dh = (dout @ p["W2"].T) * (h > 0)
        self.grads["W1"] = x.reshape(-1, x.shape[-1]).T @ dh.reshape(-1, dh.shape[-1])
        self.grads["b1"] = dh.sum(axis=lead)
        return dh @ self._W1.T

