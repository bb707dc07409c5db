"""NumPy parts keeping (weight, bias) pairs as tuples in a list: `self.layers = [(W1, b1), (W2,
b2)]` for a feed-forward, `self.norms = [(gain, shift), ...]` for a layer's norms. Forward only,
(in, out) matrices. Our own code; the wrong twins say BUG."""
from __future__ import annotations

import numpy as np


class TupleFeedForward:
    def __init__(self, d_model, d_ff):
        rng = np.random.default_rng(0)
        self.layers = [(rng.standard_normal((d_model, d_ff)) * 0.1, np.zeros(d_ff)),
                       (rng.standard_normal((d_ff, d_model)) * 0.1, np.zeros(d_model))]

    def forward(self, x):
        (W1, b1), (W2, b2) = self.layers
        return np.maximum(x @ W1 + b1, 0) @ W2 + b2


class TupleFeedForwardBUG(TupleFeedForward):
    """BUG: the second bias is added before the second projection."""

    def forward(self, x):
        (W1, b1), (W2, b2) = self.layers
        return (np.maximum(x @ W1 + b1, 0) + b2[: W1.shape[1]].sum()) @ W2


def _norm(x, g, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    return g * (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps) + b


class _Attention:
    def __init__(self, d_model, num_heads, rng):
        self.h = num_heads
        self.W_q, self.W_k, self.W_v, self.W_o = (rng.standard_normal((d_model, d_model)) / np.sqrt(d_model)
                                                  for _ in range(4))
        self.b_q, self.b_k, self.b_v, self.b_o = (np.zeros(d_model) for _ in range(4))

    def __call__(self, xq, xkv, mask):
        B, T, D = xq.shape
        dk = D // self.h

        def heads(t):
            return t.reshape(B, -1, self.h, dk).transpose(0, 2, 1, 3)              # (B, H, T, dk)
        s = heads(xq @ self.W_q + self.b_q) @ heads(xkv @ self.W_k + self.b_k).transpose(0, 1, 3, 2)
        s = s / np.sqrt(dk)
        if mask is not None:
            s = np.where(mask != 0, s, -np.inf)
        e = np.exp(s - s.max(-1, keepdims=True))
        y = (e / e.sum(-1, keepdims=True)) @ heads(xkv @ self.W_v + self.b_v)
        return y.transpose(0, 2, 1, 3).reshape(B, T, D) @ self.W_o + self.b_o


class TupleNormPreNormDecoderLayer:
    """Pre-norm decoder layer: x + SelfAttn(LN(x)), + CrossAttn(LN(x), memory), + FFN(LN(x))."""

    order = (0, 1, 2)

    def __init__(self, d_model, num_heads, d_ff):
        rng = np.random.default_rng(2)
        self.self_attn = _Attention(d_model, num_heads, rng)
        self.cross_attn = _Attention(d_model, num_heads, rng)
        self.ffn = TupleFeedForward(d_model, d_ff)
        self.norms = [(np.ones(d_model), np.zeros(d_model)) for _ in range(3)]

    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        n1, n2, n3 = (self.norms[i] for i in self.order)
        h = _norm(x, *n1)
        x = x + self.self_attn(h, h, tgt_mask)
        x = x + self.cross_attn(_norm(x, *n2), memory, memory_mask)
        return x + self.ffn.forward(_norm(x, *n3))


class TupleNormPreNormDecoderLayerBUG(TupleNormPreNormDecoderLayer):
    """BUG: the cross-attention's norm and the feed-forward's are swapped."""

    order = (0, 2, 1)
