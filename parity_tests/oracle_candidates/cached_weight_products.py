"""A right NumPy feed-forward that keeps a transposed copy of a weight between calls and rebuilds it
when the weight's bytes change, as a speed-minded layer may. It must match, also when its weights
are written again between two calls; the hostile twin keeps its first copy
(oracle_hostile/stale_weight_copy.py)."""
import numpy as np


class KeyedCacheFeedForward:
    """NumPy, weights stored (in, out): check with --weight-layout in_out."""

    def __init__(self, d_model, d_ff):
        rng = np.random.default_rng(0)
        self.W1, self.W2 = (rng.standard_normal(s) * 0.1 for s in ((d_model, d_ff), (d_ff, d_model)))
        self.b1, self.b2 = np.zeros(d_ff), np.zeros(d_model)
        self._key, self._W1T = None, None

    def _w1t(self):
        key = self.W1.tobytes()
        if key != self._key:
            self._key, self._W1T = key, np.ascontiguousarray(self.W1.T)
        return self._W1T

    def forward(self, x):
        self.x, self.h = x, x @ self.W1 + self.b1
        self.a = np.maximum(self.h, 0.0)
        return self.a @ self.W2 + self.b2

    def backward(self, dout):
        flat = lambda t: t.reshape(-1, t.shape[-1])  # noqa: E731
        self.dW2, self.db2 = flat(self.a).T @ flat(dout), flat(dout).sum(0)
        dh = (dout @ self.W2.T) * (self.h > 0)
        self.dW1, self.db1 = flat(self.x).T @ flat(dh), flat(dh).sum(0)
        return dh @ self._w1t()

