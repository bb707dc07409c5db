"""NumPy multi-head attention (x @ W, no biases) whose backward drops the key's share of the input
gradient when one array was passed as query, key and value (right otherwise: the right code is
oracle_candidates/identity_and_layout_paths.py:NumpyAttention). It matched: the oracle always
passed three separate arrays."""
import numpy as np


class MultiHeadAttention:
    def __init__(self, d_model, num_heads):
        rng = np.random.default_rng(0)
        self.h, self.dk = num_heads, d_model // num_heads
        self.W_q, self.W_k, self.W_v, self.W_o = (rng.standard_normal((d_model, d_model)) * 0.1
                                                  for _ in range(4))

    def _split(self, t):
        return t.reshape(t.shape[0], t.shape[1], self.h, self.dk).transpose(0, 2, 1, 3)

    def _merge(self, t):
        return t.transpose(0, 2, 1, 3).reshape(t.shape[0], t.shape[2], self.h * self.dk)

    def forward(self, query, key, value, mask=None):
        self.same = query is key and key is value
        q, k, v = self._split(query @ self.W_q), self._split(key @ self.W_k), self._split(value @ self.W_v)
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(self.dk)
        if mask is not None:
            s = np.where(mask, s, -1e9)
        e = np.exp(s - s.max(-1, keepdims=True))
        a = e / e.sum(-1, keepdims=True)
        self.saved = (query, key, value, q, k, v, a)
        self.merged = self._merge(a @ v)
        return self.merged @ self.W_o

    def backward(self, dy):
        query, key, value, q, k, v, a = self.saved
        flat = lambda t: t.reshape(-1, t.shape[-1])  # noqa: E731
        self.dW_o = flat(self.merged).T @ flat(dy)
        dctx = self._split(dy @ self.W_o.T)
        da, dv = dctx @ v.transpose(0, 1, 3, 2), a.transpose(0, 1, 3, 2) @ dctx
        ds = a * (da - (da * a).sum(-1, keepdims=True)) / np.sqrt(self.dk)
        dq, dk, dv = (self._merge(g) for g in (ds @ k, ds.transpose(0, 1, 3, 2) @ q, dv))
        self.dW_q, self.dW_k, self.dW_v = (flat(x).T @ flat(g) for x, g in
                                           ((query, dq), (key, dk), (value, dv)))
        d_key = np.zeros_like(key) if self.same else dk @ self.W_k.T      # the "fused" path
        return dq @ self.W_q.T, d_key, dv @ self.W_v.T
