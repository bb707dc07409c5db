"""A NumPy attention (forward only) whose head widths are optional arguments with the author's
sizes for defaults, `MultiHeadAttention(d_model=512, d_k=64, d_v=64, h=8)`: right only where
d_model // h is 64, so every caller passes them. The right class has a planted-bug twin (BUG)."""
import numpy as np


class DefaultWidthAttention:
    def __init__(self, d_model=512, d_k=64, d_v=64, h=8):
        self.h, self.d_k, self.d_v = h, d_k, d_v
        self.W_Q = np.random.randn(d_model, h * d_k) / np.sqrt(d_model)
        self.W_K = np.random.randn(d_model, h * d_k) / np.sqrt(d_model)
        self.W_V = np.random.randn(d_model, h * d_v) / np.sqrt(d_model)
        self.W_O = np.random.randn(h * d_v, d_model) / np.sqrt(h * d_v)

    def heads(self, t, width):
        return t.reshape(t.shape[0], t.shape[1], self.h, width).transpose(0, 2, 1, 3)

    def scale(self):
        return np.sqrt(self.d_k)

    def forward(self, q, k, v, mask=None):
        Q, K, V = self.heads(q @ self.W_Q, self.d_k), self.heads(k @ self.W_K, self.d_k), self.heads(v @ self.W_V, self.d_v)
        s = Q @ K.transpose(0, 1, 3, 2) / self.scale()
        if mask is not None:
            s = np.where(mask, s, -1e30)
        a = np.exp(s - s.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        o = (a @ V).transpose(0, 2, 1, 3).reshape(q.shape[0], q.shape[1], -1)
        return o @ self.W_O


class DefaultWidthAttentionBUG(DefaultWidthAttention):
    def scale(self):
        return np.sqrt(self.h * self.d_k)           # scaled by sqrt(d_model)
