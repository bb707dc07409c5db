"""Layers written by hand over torch tensors: plain classes (no torch.nn.Module), weights held as
tensors drawn from a constructor-given distribution (`mean`, `std`), forward with torch ops and a
backward(dout) of their own; autograd is never used. Each right class has a wrong twin (suffix
BUG) with one planted mistake."""
import math

import torch


class HandLinear:
    """y = x @ W.T + b; gradients kept in preallocated tensors (grad_W, grad_b)."""

    def __init__(self, n_in, n_out, mean, std):
        self.W = torch.normal(mean, std, size=(n_out, n_in))
        self.b = torch.normal(mean, std, size=(n_out,))
        self.grad_W = torch.zeros_like(self.W)
        self.grad_b = torch.zeros_like(self.b)

    def forward(self, x):
        self._x = x
        return x @ self.W.T + self.b

    def backward(self, dy):
        x2 = self._x.reshape(-1, self._x.shape[-1])
        dy2 = dy.reshape(-1, dy.shape[-1])
        self.grad_W.copy_(dy2.T @ x2)
        self.grad_b.copy_(dy2.sum(0))
        return dy @ self.W


class HandFeedForward:
    def __init__(self, d_model, d_ff, mean, std):
        self.fc1 = HandLinear(d_model, d_ff, mean, std)
        self.fc2 = HandLinear(d_ff, d_model, mean, std)

    def forward(self, x):
        self._h = self.fc1.forward(x)
        return self.fc2.forward(torch.relu(self._h))

    def backward(self, dout):
        dh = self.fc2.backward(dout)
        return self.fc1.backward(dh * (self._h > 0))


class HandFeedForwardBUG(HandFeedForward):
    def backward(self, dout):                         # the ReLU's gate forgotten
        return self.fc1.backward(self.fc2.backward(dout))


class HandLayerNorm:
    """Gain and shift as tensors; their gradients assigned afresh on every backward (dgain, dshift)."""

    def __init__(self, d_model, eps=1e-5):
        self.eps = eps
        self.gain = torch.ones(d_model)
        self.shift = torch.zeros(d_model)

    def forward(self, x):
        mu = x.mean(-1, keepdim=True)
        inv = 1.0 / torch.sqrt(((x - mu) ** 2).mean(-1, keepdim=True) + self.eps)
        xhat = (x - mu) * inv
        self.cache = (xhat, inv)
        return xhat * self.gain + self.shift

    def backward(self, dout):
        xhat, inv = self.cache
        dims = tuple(range(dout.dim() - 1))
        self.dgain = (dout * xhat).sum(dims)
        self.dshift = dout.sum(dims)
        g = dout * self.gain
        return inv * (g - g.mean(-1, keepdim=True) - xhat * (g * xhat).mean(-1, keepdim=True))


class HandLayerNormBUG(HandLayerNorm):
    def backward(self, dout):                         # the variance's path through x left out
        xhat, inv = self.cache
        dims = tuple(range(dout.dim() - 1))
        self.dgain = (dout * xhat).sum(dims)
        self.dshift = dout.sum(dims)
        g = dout * self.gain
        return inv * (g - g.mean(-1, keepdim=True))


class HandMultiHeadAttention:
    """forward(query, key, value, mask=None), mask nonzero = may attend; backward returns
    (dquery, dkey, dvalue)."""

    def __init__(self, d_model, num_heads, mean, std):
        self.h, self.dk = num_heads, d_model // num_heads
        self.wq, self.wk, self.wv, self.wo = (HandLinear(d_model, d_model, mean, std) for _ in range(4))

    def _split(self, t):
        B, T, _ = t.shape
        return t.reshape(B, T, self.h, self.dk).transpose(1, 2)

    def _merge(self, t):
        B, _, T, _ = t.shape
        return t.transpose(1, 2).reshape(B, T, self.h * self.dk)

    def _scale(self):
        return 1.0 / math.sqrt(self.dk)

    def forward(self, query, key, value, mask=None):
        q, k, v = (self._split(lin.forward(t)) for lin, t in
                   ((self.wq, query), (self.wk, key), (self.wv, value)))
        s = q @ k.transpose(-1, -2) * self._scale()
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        a = torch.softmax(s, dim=-1)
        self._saved = (q, k, v, a)
        return self.wo.forward(self._merge(a @ v))

    def backward(self, dout):
        q, k, v, a = self._saved
        do = self._split(self.wo.backward(dout))
        da = do @ v.transpose(-1, -2)
        dv = a.transpose(-1, -2) @ do
        ds = a * (da - (da * a).sum(-1, keepdim=True)) * self._scale()
        dq, dk = ds @ k, ds.transpose(-1, -2) @ q
        return (self.wq.backward(self._merge(dq)), self.wk.backward(self._merge(dk)),
                self.wv.backward(self._merge(dv)))


class HandMultiHeadAttentionBUG(HandMultiHeadAttention):
    def _scale(self):                                 # scores divided by the model width
        return 1.0 / math.sqrt(self.h * self.dk)
