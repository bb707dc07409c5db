"""NumPy parts keeping each weight twice, as course code does: an attribute (`self.W1`) and the
same array again in `self.params = {'W1': self.W1, ...}`, with zeroed gradients in `self.grads`.
The attention has no biases. Forward only. Twins whose docstring says BUG have one planted
mistake."""
from __future__ import annotations

import math

import numpy as np


def _softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


class AliasedAttention:
    def __init__(self, d_model, num_heads):
        self.h, self.d_k = num_heads, d_model // num_heads
        self.W_q = np.random.randn(d_model, d_model) * 0.1
        self.W_k = np.random.randn(d_model, d_model) * 0.1
        self.W_v = np.random.randn(d_model, d_model) * 0.1
        self.W_o = np.random.randn(d_model, d_model) * 0.1
        self.params = {'W_q': self.W_q, 'W_k': self.W_k, 'W_v': self.W_v, 'W_o': self.W_o}
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def _split(self, t):
        b, n, _ = t.shape
        return t.reshape(b, n, self.h, self.d_k).transpose(0, 2, 1, 3)

    def scores(self, q, k):
        return q @ k.transpose(0, 1, 3, 2) / math.sqrt(self.d_k)

    def __call__(self, Q, K, V, mask=None):
        q, k, v = self._split(Q @ self.W_q), self._split(K @ self.W_k), self._split(V @ self.W_v)
        s = self.scores(q, k)
        if mask is not None:
            s = np.where(mask == 0, -1e9, s)
        out = _softmax(s) @ v
        b, _, n, _ = out.shape
        return out.transpose(0, 2, 1, 3).reshape(b, n, -1) @ self.W_o


class AliasedAttentionBUG(AliasedAttention):
    """BUG: the scores are not scaled."""

    def scores(self, q, k):
        return q @ k.transpose(0, 1, 3, 2)


class AliasedFeedForward:
    def __init__(self, d_model, d_ff):
        self.W1 = np.random.randn(d_model, d_ff) * 0.1
        self.b1 = np.zeros(d_ff)
        self.W2 = np.random.randn(d_ff, d_model) * 0.1
        self.b2 = np.zeros(d_model)
        self.params = {'W1': self.W1, 'b1': self.b1, 'W2': self.W2, 'b2': self.b2}
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def __call__(self, x):
        return np.maximum(0, x @ self.W1 + self.b1) @ self.W2 + self.b2


class AliasedLayerNorm:
    def __init__(self, d_model, eps=1e-5):
        self.gamma, self.beta, self.eps = np.ones(d_model), np.zeros(d_model), eps
        self.params = {'gamma': self.gamma, 'beta': self.beta}
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def __call__(self, x):
        mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return self.gamma * (x - mu) / np.sqrt(var + self.eps) + self.beta


class AliasedEncoderLayer:
    """Post-norm, ReLU, built from the parts above."""

    def __init__(self, d_model, num_heads, d_ff):
        self.attn = AliasedAttention(d_model, num_heads)
        self.norm1 = AliasedLayerNorm(d_model)
        self.ff = AliasedFeedForward(d_model, d_ff)
        self.norm2 = AliasedLayerNorm(d_model)

    def __call__(self, x, mask=None):
        x = self.norm1(x + self.attn(x, x, x, mask))
        return self.norm2(x + self.ff(x))


class AliasedEncoderLayerBUG(AliasedEncoderLayer):
    """BUG: the second norm is applied before the residual is added."""

    def __call__(self, x, mask=None):
        x = self.norm1(x + self.attn(x, x, x, mask))
        return x + self.norm2(self.ff(x))
