"""NumPy layers built in float32 that allocate their gradient buffers beside their weights when built
and fill them in place in backward (test data for parity_tests/test_oracle_float32_grad_buffers.py).
The twin plants one bug in the backward."""
import numpy as np


class BufferedFeedForward:
    BIAS_SUM = True

    def __init__(self, d_model, d_ff):
        rng = np.random.default_rng(0)
        self.W1 = (rng.standard_normal((d_model, d_ff)) * 0.3).astype(np.float32)   # x @ W1
        self.b1 = np.zeros(d_ff, dtype=np.float32)
        self.W2 = (rng.standard_normal((d_ff, d_model)) * 0.3).astype(np.float32)
        self.b2 = np.zeros(d_model, dtype=np.float32)
        self.grads = {k: np.zeros_like(getattr(self, k)) for k in ("W1", "b1", "W2", "b2")}

    def forward(self, x):
        self.x, self.h = x, x @ self.W1 + self.b1
        self.a = np.maximum(self.h, 0)
        return self.a @ self.W2 + self.b2

    def backward(self, dy):
        d = dy.reshape(-1, dy.shape[-1])
        da = dy @ self.W2.T
        dh = (da * (self.h > 0)).reshape(-1, self.W1.shape[1])
        self.grads["W2"][...] = self.a.reshape(-1, self.W2.shape[0]).T @ d
        self.grads["b2"][...] = d.sum(0) if self.BIAS_SUM else d.mean(0)
        self.grads["W1"][...] = self.x.reshape(-1, self.W1.shape[0]).T @ dh
        self.grads["b1"][...] = dh.sum(0)
        return (dh @ self.W1.T).reshape(self.x.shape)


class BufferedFeedForwardBiasMean(BufferedFeedForward):
    """BUG: the output bias's gradient is the mean over positions, not the sum."""

    BIAS_SUM = False
