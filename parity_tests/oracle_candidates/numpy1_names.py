"""NumPy code written for NumPy 1 (test data for parity_tests/test_oracle_numpy1_names.py): it uses
names NumPy 2 removed, in an annotation read at import (`np.float_`) and in its arithmetic
(`np.float`, `np.NaN`); and an attention keeping torch's flat names (`q_proj_weight` ...
`out_proj_bias`, the output bias as a (1, d) row). The twins plant a bug."""
from typing import Union

import numpy as np
from numpy.typing import NDArray

Floats = Union[NDArray[np.float_], float]


class LegacyLayerNorm:
    def __init__(self, d_model, eps=1e-5):
        self.gamma, self.beta, self.eps = np.ones(d_model, dtype=np.float), np.zeros(d_model), eps

    def _spread(self, x) -> Floats:
        return np.sqrt(x.var(-1, keepdims=True) + self.eps)

    def forward(self, x: Floats) -> Floats:
        if np.isnan(np.NaN * 0):                     # NumPy 1's spelling of nan
            x = x.astype(np.float_)
        return self.gamma * (x - x.mean(-1, keepdims=True)) / self._spread(x) + self.beta


class LegacyLayerNormEpsOutside(LegacyLayerNorm):
    """BUG: eps added to the standard deviation instead of the variance."""

    def _spread(self, x) -> Floats:
        return x.std(-1, keepdims=True) + self.eps


class FlatNamedAttention:
    """Forward only, torch's (out, in) layout under flat names, output bias kept as (1, d)."""

    def __init__(self, embed_dim, num_heads):
        rng = np.random.default_rng(0)
        self.h, self.dk = num_heads, embed_dim // num_heads
        for p in ("q", "k", "v", "out"):
            setattr(self, f"{p}_proj_weight", rng.standard_normal((embed_dim, embed_dim)) * 0.3)
        self.q_proj_bias, self.k_proj_bias, self.v_proj_bias = (rng.standard_normal(embed_dim) * 0.1
                                                                for _ in range(3))
        self.out_proj_bias = rng.standard_normal((1, embed_dim)) * 0.1

    def _heads(self, t, w, b):
        n, s, _ = t.shape
        return (t @ w.T + b).reshape(n, s, self.h, self.dk).transpose(0, 2, 1, 3)

    def _scores(self, q, k):
        return q @ k.transpose(0, 1, 3, 2) / np.sqrt(self.dk)

    def forward(self, query, key, value, mask=None):
        q = self._heads(query, self.q_proj_weight, self.q_proj_bias)
        k = self._heads(key, self.k_proj_weight, self.k_proj_bias)
        v = self._heads(value, self.v_proj_weight, self.v_proj_bias)
        s = self._scores(q, k)
        if mask is not None:
            s = np.where(mask == 0, -1e9, s)
        a = np.exp(s - s.max(-1, keepdims=True))
        ctx = (a / a.sum(-1, keepdims=True)) @ v
        n, _, t, _ = ctx.shape
        return ctx.transpose(0, 2, 1, 3).reshape(n, t, -1) @ self.out_proj_weight.T + self.out_proj_bias


class FlatNamedAttentionUnscaled(FlatNamedAttention):
    """BUG: the scores are not scaled by 1/sqrt(d_k)."""

    def _scores(self, q, k):
        return q @ k.transpose(0, 1, 3, 2)
