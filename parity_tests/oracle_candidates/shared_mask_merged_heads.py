"""Merged-head attention taking one (Tq, Tk) mask for the whole batch, True where a key is hidden,
as `mask[None]` over its (batch*heads, Tq, Tk) scores (test data for
parity_tests/test_oracle_shared_mask_merged_heads.py). The twin plants one bug in the backward."""
import numpy as np


class SharedMaskMergedAttention:
    KEY_SCALE = True

    def __init__(self, d_model, num_heads):
        rng = np.random.default_rng(1)
        self.h, self.dh = num_heads, d_model // num_heads
        self.Wq, self.Wk, self.Wv, self.Wo = (rng.standard_normal((d_model, d_model)) * 0.3
                                              for _ in range(4))

    def _split(self, t):                     # (B, T, d) -> (B*h, T, dh)
        b, n, _ = t.shape
        return t.reshape(b, n, self.h, self.dh).transpose(0, 2, 1, 3).reshape(b * self.h, n, self.dh)

    def _merge(self, t, b):                  # (B*h, T, dh) -> (B, T, d)
        n = t.shape[1]
        return t.reshape(b, self.h, n, self.dh).transpose(0, 2, 1, 3).reshape(b, n, self.h * self.dh)

    def forward(self, x, mask=None):
        q, k, v = (self._split(x @ w) for w in (self.Wq, self.Wk, self.Wv))
        s = q @ k.transpose(0, 2, 1) / np.sqrt(self.dh)
        if mask is not None:
            s = np.where(np.asarray(mask, dtype=bool)[None], -1e9, s)
        e = np.exp(s - s.max(-1, keepdims=True))
        p = e / e.sum(-1, keepdims=True)
        self.saved = (x, q, k, v, p, self._merge(p @ v, x.shape[0]))
        return self.saved[-1] @ self.Wo

    def backward(self, dy):
        x, q, k, v, p, ctx = self.saved
        b, d = x.shape[0], x.shape[-1]
        self.dWo = ctx.reshape(-1, d).T @ dy.reshape(-1, d)
        dctx = self._split(dy @ self.Wo.T)
        dp, dv = dctx @ v.transpose(0, 2, 1), p.transpose(0, 2, 1) @ dctx
        ds = p * (dp - (dp * p).sum(-1, keepdims=True)) / np.sqrt(self.dh)
        dq, dk = ds @ k, ds.transpose(0, 2, 1) @ q
        if not self.KEY_SCALE:
            dk = dk * np.sqrt(self.dh)
        dx = 0
        for name, g in (("Wq", dq), ("Wk", dk), ("Wv", dv)):
            g = self._merge(g, b)
            setattr(self, "d" + name, x.reshape(-1, d).T @ g.reshape(-1, d))
            dx = dx + g @ getattr(self, name).T
        return dx


class SharedMaskMergedAttentionKeyUnscaled(SharedMaskMergedAttention):
    """BUG: the key's gradient misses the 1/sqrt(d_head) scale."""

    KEY_SCALE = False
