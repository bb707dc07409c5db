"""A whole encoder layer in NumPy with a hand-written backward, as course projects write it: one
class per part, each with forward/backward methods, caches on self, weights in self.params and
gradients in self.grads, matrices stored (in, out) and used as x @ W. Written for the oracle's reach
tests; correct unless a docstring says BUG."""
import numpy as np


class Dense:
    def __init__(self, n_in, n_out, rng):
        self.params = {"W": rng.standard_normal((n_in, n_out)) / np.sqrt(n_in), "b": np.zeros(n_out)}
        self.grads = {}

    def forward(self, x):
        self.x = x
        return x @ self.params["W"] + self.params["b"]                      # (..., n_out)

    def backward(self, dy):
        n_in, n_out = self.params["W"].shape
        self.grads["W"] = self.x.reshape(-1, n_in).T @ dy.reshape(-1, n_out)
        self.grads["b"] = dy.reshape(-1, n_out).sum(0)
        return dy @ self.params["W"].T


class LayerNorm:
    def __init__(self, d_model, eps=1e-6):
        self.eps = eps
        self.params = {"gamma": np.ones(d_model), "beta": np.zeros(d_model)}
        self.grads = {}

    def forward(self, x):
        mu = x.mean(-1, keepdims=True)
        self.rstd = 1.0 / np.sqrt(x.var(-1, keepdims=True) + self.eps)       # (..., 1)
        self.xhat = (x - mu) * self.rstd
        return self.params["gamma"] * self.xhat + self.params["beta"]

    def backward(self, dy):
        d = dy.shape[-1]
        self.grads["gamma"] = (dy * self.xhat).reshape(-1, d).sum(0)
        self.grads["beta"] = dy.reshape(-1, d).sum(0)
        g = dy * self.params["gamma"]
        return self.rstd * (g - g.mean(-1, keepdims=True)
                            - self.xhat * (g * self.xhat).mean(-1, keepdims=True))


class SelfAttention:
    def __init__(self, d_model, num_heads, rng):
        self.h = num_heads
        self.wq, self.wk, self.wv, self.wo = (Dense(d_model, d_model, rng) for _ in range(4))

    def _split(self, t):
        B, T, D = t.shape
        return t.reshape(B, T, self.h, D // self.h).transpose(0, 2, 1, 3)   # (B, h, T, dk)

    def _merge(self, t):
        B, h, T, dk = t.shape
        return t.transpose(0, 2, 1, 3).reshape(B, T, h * dk)

    def forward(self, x, mask=None, kv=None):
        self.cross = kv is not None
        kv = x if kv is None else kv
        Q, K, V = self._split(self.wq.forward(x)), self._split(self.wk.forward(kv)), self._split(self.wv.forward(kv))
        self.scale = self._scale(Q.shape[-1])
        s = Q @ K.transpose(0, 1, 3, 2) * self.scale                          # (B, h, T, T)
        if mask is not None:
            s = np.where(mask, s, -1e9)
        s = s - s.max(-1, keepdims=True)
        A = np.exp(s)
        A /= A.sum(-1, keepdims=True)
        self.cache = (Q, K, V, A)
        return self.wo.forward(self._merge(A @ V))

    def _scale(self, dk):
        return 1.0 / np.sqrt(dk)

    def backward(self, dy):
        Q, K, V, A = self.cache
        dZ = self._split(self.wo.backward(dy))                                # (B, h, T, dk)
        dA = dZ @ V.transpose(0, 1, 3, 2)
        dV = A.transpose(0, 1, 3, 2) @ dZ
        ds = A * (dA - (dA * A).sum(-1, keepdims=True)) * self.scale
        dQ, dK = ds @ K, ds.transpose(0, 1, 3, 2) @ Q
        dq = self.wq.backward(self._merge(dQ))
        dkv = self.wk.backward(self._merge(dK)) + self.wv.backward(self._merge(dV))
        return (dq, dkv) if self.cross else dq + dkv


class FeedForward:
    def __init__(self, d_model, d_ff, rng):
        self.fc1, self.fc2 = Dense(d_model, d_ff, rng), Dense(d_ff, d_model, rng)

    def forward(self, x):
        self.h = self.fc1.forward(x)
        return self.fc2.forward(np.maximum(self.h, 0.0))

    def backward(self, dy):
        return self.fc1.backward(self.fc2.backward(dy) * (self.h > 0))


class EncoderLayer:
    """Post-norm: y = LN1(x + Attn(x)); out = LN2(y + FFN(y)). forward(x, mask); backward(dout) -> dx."""

    def __init__(self, d_model, num_heads, d_ff, seed=0):
        rng = np.random.default_rng(seed)
        self.attn = SelfAttention(d_model, num_heads, rng)
        self.norm1 = LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff, rng)
        self.norm2 = LayerNorm(d_model)

    def forward(self, x, mask=None):
        y = self.norm1.forward(x + self.attn.forward(x, mask))
        return self.norm2.forward(y + self.ffn.forward(y))

    def backward(self, dout):
        dy = self.norm2.backward(dout)
        dy = dy + self.ffn.backward(dy)
        dx = self.norm1.backward(dy)
        return dx + self.attn.backward(dx)


class EncoderLayerNoSkipGrad(EncoderLayer):
    """BUG: backward forgets the residual path around the feed-forward (forward is right)."""

    def backward(self, dout):
        dy = self.ffn.backward(self.norm2.backward(dout))
        dx = self.norm1.backward(dy)
        return dx + self.attn.backward(dx)


class DecoderLayer:
    """Post-norm with cross-attention. forward(x, memory, tgt_mask, src_mask);
    backward(dout) -> (dx, dmemory)."""

    def __init__(self, d_model, num_heads, d_ff, seed=0):
        rng = np.random.default_rng(seed)
        self.self_attn = SelfAttention(d_model, num_heads, rng)
        self.norm1 = LayerNorm(d_model)
        self.cross_attn = SelfAttention(d_model, num_heads, rng)
        self.norm2 = LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff, rng)
        self.norm3 = LayerNorm(d_model)

    def forward(self, x, memory, tgt_mask=None, src_mask=None):
        y = self.norm1.forward(x + self.self_attn.forward(x, tgt_mask))
        z = self.norm2.forward(y + self.cross_attn.forward(y, src_mask, kv=memory))
        return self.norm3.forward(z + self.ffn.forward(z))

    def backward(self, dout):
        dz = self.norm3.backward(dout)
        dz = dz + self.ffn.backward(dz)
        dy = self.norm2.backward(dz)
        dq, dmem = self.cross_attn.backward(dy)
        dy = dy + dq
        dx = self.norm1.backward(dy)
        return dx + self.self_attn.backward(dx), dmem


class DecoderLayerCrossScaleTwice(DecoderLayer):
    """BUG: the cross-attention's scores are scaled by 1/d_k instead of 1/sqrt(d_k)."""

    def __init__(self, d_model, num_heads, d_ff, seed=0):
        super().__init__(d_model, num_heads, d_ff, seed)
        self.cross_attn.__class__ = _ScaleByDk


class _ScaleByDk(SelfAttention):
    def _scale(self, dk):
        return 1.0 / dk
