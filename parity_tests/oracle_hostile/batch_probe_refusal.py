"""NumPy layers that take a batch but compute it wrongly (right at batch 1), refusing a batch only
when it has three sequences, as the one-sequence probe's has: found "written for one (T, d)
sequence", they were handed batch 1 without its batch axis and matched. Test data for
parity_tests/test_oracle_batch_probe_refusal.py."""
import numpy as np


class BatchMixingAttention:
    """Self-attention over every token of the batch at once: sequences attend to each other."""

    def __init__(self, d_model, num_heads):
        rng = np.random.default_rng(2)
        self.h, self.dh = num_heads, d_model // num_heads
        self.Wq, self.Wk, self.Wv, self.Wo = (rng.standard_normal((d_model, d_model)) * 0.3
                                              for _ in range(4))

    def forward(self, x):                       # x: (T, d) or (B, T, d)
        if x.ndim == 3 and x.shape[0] == 3:
            raise ValueError("expected one sequence (T, d)")
        tokens = x.reshape(-1, x.shape[-1])      # (B * T, d): the batch as one sequence
        q, k, v = tokens @ self.Wq.T, tokens @ self.Wk.T, tokens @ self.Wv.T
        heads = []
        for i in range(self.h):
            s = slice(i * self.dh, (i + 1) * self.dh)
            a = q[:, s] @ k[:, s].T / np.sqrt(self.dh)
            e = np.exp(a - a.max(-1, keepdims=True))
            heads.append(e / e.sum(-1, keepdims=True) @ v[:, s])
        return (np.concatenate(heads, -1) @ self.Wo.T).reshape(x.shape)


class BatchStatsNorm:
    """Layer norm whose variance at each position is pooled over the batch's sequences (batch
    norm's mistake inside a layer norm)."""

    def __init__(self, d_model, eps=1e-5):
        self.gamma, self.beta, self.eps = np.ones(d_model), np.zeros(d_model), eps

    def __call__(self, x):
        if x.ndim == 3 and x.shape[0] == 3:
            raise ValueError("expected one sequence (T, d)")
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(axis=(0, -1), keepdims=True) if x.ndim == 3 else \
            ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + self.eps) * self.gamma + self.beta
