"""Multi-head attention whose four square matrices have names that say nothing and are registered
in an order that is not q, k, v, out (test data for parity_tests/test_oracle_roles.py). Each
matrix is used as `x @ M` ((in, out)). The wrong twin's BUG is in its docstring."""
import math

import torch
from torch import nn


class Mixer(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.A, self.B, self.C, self.D = (nn.Parameter(torch.randn(d_model, d_model))
                                          for _ in range(4))

    def _split(self, t):
        b, n, d = t.shape
        return t.view(b, n, self.h, d // self.h).transpose(1, 2)

    def _scores(self, q, k):
        return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])

    def forward(self, query, key, value, mask=None):
        q, k, v = self._split(query @ self.C), self._split(key @ self.A), self._split(value @ self.D)
        s = self._scores(q, k)
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        w = torch.softmax(s, dim=-1)
        out = (w @ v).transpose(1, 2).reshape(query.shape)
        return out @ self.B, w


class MixerSwappedScale(Mixer):
    """BUG: scores scaled by sqrt(d_model) instead of sqrt(d_k)."""

    def _scores(self, q, k):
        return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1] * self.h)


class MixerSharedQK(Mixer):
    """BUG: the keys are projected with the query's matrix (the key matrix is never used)."""

    def forward(self, query, key, value, mask=None):
        self.A.data.copy_(self.A.data)            # keeps A registered, unused below
        q, k, v = self._split(query @ self.C), self._split(key @ self.C), self._split(value @ self.D)
        w = torch.softmax(self._scores(q, k), dim=-1)
        return (w @ v).transpose(1, 2).reshape(query.shape) @ self.B, w
