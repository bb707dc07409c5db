"""A NumPy self-attention that refuses a batch of three sequences (a learner's leftover assert) and
computes every other batch right (test data for parity_tests/test_oracle_batch_probe_refusal.py):
found written for one sequence, it is compared on a batch of two as well, and matches."""
import numpy as np


class PickyBatchAttention:
    def __init__(self, d_model, num_heads):
        rng = np.random.default_rng(4)
        self.h, self.dh = num_heads, d_model // num_heads
        self.Wq, self.Wk, self.Wv, self.Wo = (rng.standard_normal((d_model, d_model)) * 0.3
                                              for _ in range(4))

    def forward(self, x):                       # x: (T, d) or (B, T, d), B != 3
        assert not (x.ndim == 3 and x.shape[0] == 3), "batches of three are not supported"
        B, T = (1,) + x.shape[:1] if x.ndim == 2 else x.shape[:2]
        split = (x.reshape(B, T, -1) @ W.T for W in (self.Wq, self.Wk, self.Wv))
        q, k, v = (t.reshape(B, T, self.h, self.dh).transpose(0, 2, 1, 3) for t in split)
        a = q @ k.transpose(0, 1, 3, 2) / np.sqrt(self.dh)
        e = np.exp(a - a.max(-1, keepdims=True))
        ctx = (e / e.sum(-1, keepdims=True) @ v).transpose(0, 2, 1, 3).reshape(B, T, -1)
        return (ctx @ self.Wo.T).reshape(x.shape)
