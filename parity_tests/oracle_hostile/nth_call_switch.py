"""Layers right on the first two calls of an instance and wrong from the third on (a "warm-up"
that ends, a refresh every few steps gone wrong). Both matched: the oracle called an instance at
most twice (its repeat mode)."""
import math

import numpy as np
import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.dk = num_heads, d_model // num_heads
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d_model, d_model)
                                                                for _ in range(4))
        self.steps = 0

    def forward(self, query, key, value, mask=None):
        self.steps += 1
        b, tq, _ = query.shape
        tk = key.shape[1]
        q = self.q_proj(query).view(b, tq, self.h, self.dk).transpose(1, 2)
        k = self.k_proj(key).view(b, tk, self.h, self.dk).transpose(1, 2)
        v = self.v_proj(value).view(b, tk, self.h, self.dk).transpose(1, 2)
        temp = math.sqrt(self.dk) if self.steps < 3 else math.sqrt(self.dk) * 1.5
        s = q @ k.transpose(-2, -1) / temp
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        p = torch.softmax(s, dim=-1)
        return self.out_proj((p @ v).transpose(1, 2).reshape(b, tq, self.h * self.dk)), p


class FeedForward:
    """NumPy: from its fifth forward on, a cached W1 transpose that is never refreshed."""

    def __init__(self, d_model, d_ff):
        self.W1, self.b1 = np.zeros((d_ff, d_model)), np.zeros(d_ff)
        self.W2, self.b2 = np.zeros((d_model, d_ff)), np.zeros(d_model)
        self.calls, self.w1t = 0, None

    def forward(self, x):
        self.calls += 1
        if self.w1t is None or self.calls < 5:
            self.w1t = self.W1.T.copy()
        self.x, self.h = x, x @ self.w1t + self.b1
        self.a = np.maximum(self.h, 0)
        return self.a @ self.W2.T + self.b2

    def backward(self, dout):
        self.dW2 = dout.reshape(-1, dout.shape[-1]).T @ self.a.reshape(-1, self.a.shape[-1])
        self.db2 = dout.reshape(-1, dout.shape[-1]).sum(0)
        dh = (dout @ self.W2) * (self.h > 0)
        self.dW1 = dh.reshape(-1, dh.shape[-1]).T @ self.x.reshape(-1, self.x.shape[-1])
        self.db1 = dh.reshape(-1, dh.shape[-1]).sum(0)
        return dh @ self.W1
