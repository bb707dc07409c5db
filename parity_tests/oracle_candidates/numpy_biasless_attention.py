"""NumPy multi-head attention with no biases at all: four square matrices used as `x @ W`, a
hand-written backward keeping `dW_q`..`dW_o` (test data for
parity_tests/test_oracle_numpy_biasless.py). The oracle can say the biases are absent only after
walking everything the object holds; the twins keep a bias where it is easy to miss, or scale the
scores wrongly."""
import numpy as np


def _softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


class BiaslessAttention:
    def __init__(self, d_model, n_heads):
        rng = np.random.default_rng(0)
        self.rng = rng                      # kept for dropout masks, as course code does
        self.h, self.dk = n_heads, d_model // n_heads
        self.W_q, self.W_k, self.W_v, self.W_o = (rng.standard_normal((d_model, d_model)) * 0.1
                                                  for _ in range(4))

    def _split(self, t):
        b, n, _ = t.shape
        return t.reshape(b, n, self.h, self.dk).transpose(0, 2, 1, 3)

    def _merge(self, t):
        b, _, n, _ = t.shape
        return t.transpose(0, 2, 1, 3).reshape(b, n, self.h * self.dk)

    def _scale(self):
        return 1.0 / np.sqrt(self.dk)

    def _out(self, merged):
        return merged @ self.W_o

    def forward(self, x, mask=None):
        q, k, v = (self._split(x @ w) for w in (self.W_q, self.W_k, self.W_v))
        s = q @ k.transpose(0, 1, 3, 2) * self._scale()
        if mask is not None:
            s = np.where(mask == 0, -1e9, s)
        a = _softmax(s)
        self.saved = (x, q, k, v, a)
        self.merged = self._merge(a @ v)
        return self._out(self.merged)

    def backward(self, dy):
        x, q, k, v, a = self.saved
        d = x.shape[-1]
        flat = lambda t: t.reshape(-1, d)  # noqa: E731
        self.dW_o = flat(self.merged).T @ flat(dy)
        dctx = self._split(dy @ self.W_o.T)
        da, dv = dctx @ v.transpose(0, 1, 3, 2), a.transpose(0, 1, 3, 2) @ dctx
        ds = a * (da - (da * a).sum(-1, keepdims=True)) * self._scale()
        dq, dk = ds @ k, ds.transpose(0, 1, 3, 2) @ q
        dq, dk, dv = self._merge(dq), self._merge(dk), self._merge(dv)
        self.dW_q, self.dW_k, self.dW_v = (flat(x).T @ flat(g) for g in (dq, dk, dv))
        return dq @ self.W_q.T + dk @ self.W_k.T + dv @ self.W_v.T


class BiaslessAttentionUnscaled(BiaslessAttention):
    """BUG: the scores are not scaled by 1/sqrt(d_k)."""

    def _scale(self):
        return 1.0


class HiddenBiasAttention(BiaslessAttention):
    """Keeps an output bias under a private name, zero at construction: not provably absent."""

    def __init__(self, d_model, n_heads):
        super().__init__(d_model, n_heads)
        self._shift = np.zeros(d_model)

    def _out(self, merged):
        return merged @ self.W_o + self._shift


class StrictMaskAttention:
    """Forward only, query, key and value apart, a mask it requires with 4 axes (None raises), no
    biases, `x @ W` matrices: the layout probe must hand it an all-attend mask, as examples do."""

    def __init__(self, d_model, n_heads):
        rng = np.random.default_rng(0)
        self.h, self.dk = n_heads, d_model // n_heads
        self.W_q, self.W_k, self.W_v, self.W_o = (rng.standard_normal((d_model, d_model)) * 0.1
                                                  for _ in range(4))

    def _heads(self, t, w):
        b, n, _ = t.shape
        return (t @ w).reshape(b, n, self.h, self.dk).transpose(0, 2, 1, 3)

    def _weights(self, s):
        return _softmax(s)

    def forward(self, query, key, value, mask):
        if mask is None or mask.ndim != 4:
            raise ValueError("mask must have 4 axes")
        q, k, v = self._heads(query, self.W_q), self._heads(key, self.W_k), self._heads(value, self.W_v)
        s = np.where(mask == 0, -1e9, q @ k.transpose(0, 1, 3, 2) / np.sqrt(self.dk))
        ctx = self._weights(s) @ v
        b, _, n, _ = ctx.shape
        return ctx.transpose(0, 2, 1, 3).reshape(b, n, -1) @ self.W_o


class StrictMaskAttentionWrongAxis(StrictMaskAttention):
    """BUG: the softmax normalises over the queries instead of the keys."""

    def _weights(self, s):
        e = np.exp(s - s.max(-2, keepdims=True))
        return e / e.sum(-2, keepdims=True)


class PerHeadMaskAttention(StrictMaskAttention):
    """Wants its mask with one row per head, (B, heads, Tq, Tk): a (B, 1, Tq, Tk) mask raises at
    several heads. Correct at one head, so a verdict may only be `raised`, never `mismatch`."""

    def forward(self, query, key, value, mask):
        if mask is None or mask.shape[1] != self.h:
            raise ValueError("mask and scores must have the same shape")
        return super().forward(query, key, value, mask)
