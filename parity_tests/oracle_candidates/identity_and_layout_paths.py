"""Right code that branches on how its inputs were handed over, as real layers do: a multi-head
attention taking one packed q|k|v product when query, key and value are one object (as
nn.MultiheadAttention does), a NumPy one whose backward returns each argument's own gradient
whatever the aliasing, attention functions that make non-contiguous inputs contiguous first
(torch) or read them through `np.ascontiguousarray` (NumPy), and a NumPy layer norm whose backward
does the same with its upstream gradient. Each must match; the hostile twins in
parity_tests/oracle_hostile/ (aliased_fast_path.py, aliased_backward.py, layout_branch.py,
upstream_layout_branch.py) take a wrong path there."""
import math

import numpy as np
import torch
from torch import nn


class PackedSelfPathAttention(nn.Module):
    """forward(query, key, value, mask) -> (output, weights); one matmul for q|k|v on `x, x, x`."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.d_k = num_heads, d_model // num_heads
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d_model, d_model)
                                                                for _ in range(4))

    def _heads(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.h, self.d_k).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        if query is key and key is value:
            w = torch.cat([self.q_proj.weight, self.k_proj.weight, self.v_proj.weight])
            bias = torch.cat([self.q_proj.bias, self.k_proj.bias, self.v_proj.bias])
            q, k, v = (query @ w.T + bias).chunk(3, dim=-1)
        else:
            q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        q, k, v = self._heads(q), self._heads(k), self._heads(v)
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        p = torch.softmax(s, dim=-1)
        b, n = query.shape[:2]
        return self.out_proj((p @ v).transpose(1, 2).reshape(b, n, -1)), p


class NumpyAttention:
    """x @ W, no biases; backward(dy) -> (d query, d key, d value), summed by the caller."""

    def __init__(self, d_model, num_heads):
        rng = np.random.default_rng(0)
        self.h, self.dk = num_heads, d_model // num_heads
        self.W_q, self.W_k, self.W_v, self.W_o = (rng.standard_normal((d_model, d_model)) * 0.1
                                                  for _ in range(4))

    def _split(self, t):
        b, n, _ = t.shape
        return t.reshape(b, n, self.h, self.dk).transpose(0, 2, 1, 3)

    def _merge(self, t):
        b, _, n, _ = t.shape
        return t.transpose(0, 2, 1, 3).reshape(b, n, self.h * self.dk)

    def forward(self, query, key, value, mask=None):
        q, k, v = self._split(query @ self.W_q), self._split(key @ self.W_k), self._split(value @ self.W_v)
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(self.dk)
        if mask is not None:
            s = np.where(mask, s, -1e9)
        e = np.exp(s - s.max(-1, keepdims=True))
        a = e / e.sum(-1, keepdims=True)
        self.saved = (query, key, value, q, k, v, a)
        self.merged = self._merge(a @ v)
        return self.merged @ self.W_o

    def input_grads(self, dq, dk, dv):
        return dq @ self.W_q.T, dk @ self.W_k.T, dv @ self.W_v.T

    def backward(self, dy):
        query, key, value, q, k, v, a = self.saved
        d = query.shape[-1]
        flat = lambda t: t.reshape(-1, d)  # noqa: E731
        self.dW_o = flat(self.merged).T @ flat(dy)
        dctx = self._split(dy @ self.W_o.T)
        da, dv = dctx @ v.transpose(0, 1, 3, 2), a.transpose(0, 1, 3, 2) @ dctx
        ds = a * (da - (da * a).sum(-1, keepdims=True)) / np.sqrt(self.dk)
        dq, dk = ds @ k, ds.transpose(0, 1, 3, 2) @ q
        dq, dk, dv = self._merge(dq), self._merge(dk), self._merge(dv)
        self.dW_q, self.dW_k, self.dW_v = (flat(x).T @ flat(g) for x, g in
                                           ((query, dq), (key, dk), (value, dv)))
        return self.input_grads(dq, dk, dv)


def contiguous_first(q, k, v, mask=None):
    """torch: non-contiguous inputs made contiguous, then `.view` (which needs it)."""
    if not (q.is_contiguous() and k.is_contiguous() and v.is_contiguous()):
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    *lead, tq, d = q.shape
    s = (q.view(-1, tq, d) @ k.view(-1, k.shape[-2], d).transpose(1, 2)).view(*lead, tq, -1)
    s = s / math.sqrt(d)
    if mask is not None:
        s = s.masked_fill(mask == 0, float("-inf"))
    p = torch.softmax(s, dim=-1)
    return p @ v, p


def numpy_buffer_attention(q, k, v, mask=None):
    """NumPy: each input read through np.ascontiguousarray before its buffer is reshaped."""
    q, k, v = (np.ascontiguousarray(t) for t in (q, k, v))
    s = np.einsum("...qd,...kd->...qk", q, k) / np.sqrt(q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    p = e / e.sum(-1, keepdims=True)
    return p @ v, p


def contiguous_layernorm_forward(x, gamma, beta, eps=1e-5):
    """NumPy pair; the backward reads a C-ordered copy of dout when it is not one."""
    x = np.ascontiguousarray(x)
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    xhat = (x - mu) / np.sqrt(var + eps)
    return gamma * xhat + beta, (xhat, gamma, var, eps)


def contiguous_layernorm_backward(dout, cache):
    if not dout.flags.c_contiguous:
        dout = np.ascontiguousarray(dout)
    xhat, gamma, var, eps = cache
    lead = tuple(range(dout.ndim - 1))
    dxhat = dout * gamma
    dx = (dxhat - dxhat.mean(-1, keepdims=True) - xhat * (dxhat * xhat).mean(-1, keepdims=True)) \
        / np.sqrt(var + eps)
    return dx, (dout * xhat).sum(axis=lead), dout.sum(axis=lead)
