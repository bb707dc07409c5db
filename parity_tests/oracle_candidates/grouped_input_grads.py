"""NumPy attention whose backward returns its three input gradients grouped in one tuple ahead of
dicts of parameter gradients, `return (dq, dk, dv), dweights, dbiases`, as code written after
torch's nn.MultiheadAttention does (test data for parity_tests/test_oracle_grouped_input_grads.py).
The twin's backward forgets the scale in the key's gradient."""
import numpy as np


class GroupedGradAttention:
    KEY_SCALE = True

    def __init__(self, embed_dim, num_heads):
        rng = np.random.default_rng(0)
        self.h, self.dk = num_heads, embed_dim // num_heads
        for n in "qkvo":
            setattr(self, f"W_{n}", rng.standard_normal((embed_dim, embed_dim)) * 0.3)
            setattr(self, f"b_{n}", rng.standard_normal(embed_dim) * 0.1)

    def _w(self, n):
        return getattr(self, f"W_{n}"), getattr(self, f"b_{n}")

    def _split(self, t):                    # (B, T, d) -> (B, h, T, dk)
        b, n, _ = t.shape
        return t.reshape(b, n, self.h, self.dk).transpose(0, 2, 1, 3)

    def _merge(self, t):                    # (B, h, T, dk) -> (B, T, d)
        b, _, n, _ = t.shape
        return t.transpose(0, 2, 1, 3).reshape(b, n, self.h * self.dk)

    def forward(self, query, key, value, mask=None):
        q, k, v = (self._split(x @ self._w(n)[0] + self._w(n)[1])
                   for x, n in ((query, "q"), (key, "k"), (value, "v")))
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(self.dk)
        if mask is not None:
            s = np.where(mask == 0, -1e9, s)
        e = np.exp(s - s.max(-1, keepdims=True))
        a = e / e.sum(-1, keepdims=True)
        self.saved = (query, key, value, q, k, v, a)
        self.merged = self._merge(a @ v)
        return self.merged @ self.W_o + self.b_o

    def backward(self, dy):
        x_q, x_k, x_v, q, k, v, a = self.saved
        d = dy.shape[-1]
        flat = lambda t: t.reshape(-1, d)  # noqa: E731
        dw, db = {"W_o": flat(self.merged).T @ flat(dy)}, {"b_o": flat(dy).sum(0)}
        dctx = self._split(dy @ self.W_o.T)
        da, dv = dctx @ v.transpose(0, 1, 3, 2), a.transpose(0, 1, 3, 2) @ dctx
        ds = a * (da - (da * a).sum(-1, keepdims=True)) / np.sqrt(self.dk)
        dq, dk = ds @ k, ds.transpose(0, 1, 3, 2) @ q
        if not self.KEY_SCALE:
            dk = dk * np.sqrt(self.dk)
        grads = {"q": self._merge(dq), "k": self._merge(dk), "v": self._merge(dv)}
        for n, x in (("q", x_q), ("k", x_k), ("v", x_v)):
            dw[f"W_{n}"], db[f"b_{n}"] = flat(x).T @ flat(grads[n]), flat(grads[n]).sum(0)
        return tuple(grads[n] @ self._w(n)[0].T for n in "qkv"), dw, db


class GroupedGradAttentionKeyUnscaled(GroupedGradAttention):
    """BUG: the key's gradient misses the 1/sqrt(d_k) scale."""

    KEY_SCALE = False
