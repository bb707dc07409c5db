"""NumPy self-attention built from a list of single heads, every matrix used as `x @ W`: each
head's (d_model, d_head) query, key and value matrices and a square (d_model, d_model) output
matrix. Right one matches (the output matrix read as (in, out) by the layout probe); the BUG twin
joins its heads in reverse order."""
import numpy as np


class SingleHead:
    def __init__(self, d_model, d_head, rng):
        self.Wq, self.Wk, self.Wv = (rng.standard_normal((d_model, d_head)) for _ in range(3))

    def __call__(self, x):
        q, k, v = x @ self.Wq, x @ self.Wk, x @ self.Wv
        s = q @ k.swapaxes(-1, -2) / np.sqrt(q.shape[-1])
        w = np.exp(s - s.max(axis=-1, keepdims=True))
        return (w / w.sum(axis=-1, keepdims=True)) @ v


class HeadListSelfAttention:
    def __init__(self, d_model, num_heads):
        rng = np.random.default_rng(0)
        self.heads = [SingleHead(d_model, d_model // num_heads, rng) for _ in range(num_heads)]
        self.Wo = rng.standard_normal((d_model, d_model))

    def order(self, outs):
        return outs

    def forward(self, x):
        return np.concatenate(self.order([h(x) for h in self.heads]), axis=-1) @ self.Wo


class HeadListSelfAttentionBUG(HeadListSelfAttention):
    """BUG: the heads' outputs are joined last head first."""

    def order(self, outs):
        return outs[::-1]
