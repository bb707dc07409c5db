"""A NumPy LayerNorm that computes in float32 whatever it is given, as libraries of their own that
cast every array they make do (test data for parity_tests/test_oracle_float32_only.py). Right
in float32; its twin adds eps outside the square root."""
import numpy as np


class Float32LayerNorm:
    def __init__(self, d_model, eps=1e-5):
        self.gamma = np.ones(d_model, dtype=np.float32)
        self.beta = np.zeros(d_model, dtype=np.float32)
        self.eps = eps

    def _spread(self, x):
        return np.sqrt(x.var(-1, keepdims=True) + np.float32(self.eps))

    def forward(self, x):
        x = np.asarray(x, dtype=np.float32)
        y = self.gamma * (x - x.mean(-1, keepdims=True)) / self._spread(x) + self.beta
        return y.astype(np.float32)


class Float32LayerNormEpsOutside(Float32LayerNorm):
    """BUG: eps added to the standard deviation."""

    def _spread(self, x):
        return x.std(-1, keepdims=True) + np.float32(self.eps)
