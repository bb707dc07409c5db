"""Feed-forward networks with GELU written the ways people write it: torch's F.gelu (exact and
tanh), a tanh-GELU spelled out with x**3, NumPy with math.erf vectorised and a NumPy tanh-GELU.
Check the exact ones with --set activation=gelu and the tanh ones with --set activation=gelu_tanh.
Our own code; the wrong twins say BUG."""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


class ExactGeluFFN(nn.Module):
    """F.gelu (erf form)."""

    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear1, self.linear2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.linear2(F.gelu(self.linear1(x)))


class TanhGeluFFN(ExactGeluFFN):
    """F.gelu with approximate='tanh'."""

    def forward(self, x):
        return self.linear2(F.gelu(self.linear1(x), approximate="tanh"))


class CubedTanhGeluFFN(nn.Module):
    """GPT-2's formula typed out: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x**3)))."""

    def __init__(self, d_model, d_ff):
        super().__init__()
        self.c_fc, self.c_proj = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)

    @staticmethod
    def gelu(x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class CubedTanhGeluFFNBUG(CubedTanhGeluFFN):
    """BUG: the sqrt(2/pi) factor is left out."""

    @staticmethod
    def gelu(x):
        return 0.5 * x * (1.0 + torch.tanh(x + 0.044715 * x ** 3))


class ErfGeluNumpyFFN:
    """NumPy, weights (out, in) as torch stores them, erf through np.vectorize(math.erf); forward
    only."""

    def __init__(self, d_model, d_ff):
        rng = np.random.default_rng(0)
        self.W1 = rng.standard_normal((d_ff, d_model)) / np.sqrt(d_model)
        self.b1 = np.zeros(d_ff)
        self.W2 = rng.standard_normal((d_model, d_ff)) / np.sqrt(d_ff)
        self.b2 = np.zeros(d_model)
        self._erf = np.vectorize(math.erf)

    def gelu(self, h):
        return 0.5 * h * (1.0 + self._erf(h / math.sqrt(2.0)))

    def forward(self, x):
        return self.gelu(x @ self.W1.T + self.b1) @ self.W2.T + self.b2


class ErfGeluNumpyFFNBUG(ErfGeluNumpyFFN):
    """BUG: erf(h) where erf(h / sqrt 2) is meant."""

    def gelu(self, h):
        return 0.5 * h * (1.0 + self._erf(h))


class TanhGeluNumpyFFN(ErfGeluNumpyFFN):
    """NumPy tanh-GELU with h**3, and a hand-written backward."""

    C = math.sqrt(2.0 / math.pi)

    def forward(self, x):
        self.x = x
        self.h = x @ self.W1.T + self.b1
        self.t = np.tanh(self.C * (self.h + 0.044715 * self.h ** 3))
        self.a = 0.5 * self.h * (1.0 + self.t)
        return self.a @ self.W2.T + self.b2

    def backward(self, dout):
        D, Fw = self.W2.shape
        self.dW2 = dout.reshape(-1, D).T @ self.a.reshape(-1, Fw)
        self.db2 = dout.reshape(-1, D).sum(0)
        da = dout @ self.W2
        h, t = self.h, self.t
        dgelu = 0.5 * (1.0 + t) + 0.5 * h * (1.0 - t ** 2) * self.C * (1.0 + 3 * 0.044715 * h ** 2)
        dh = da * dgelu
        self.dW1 = dh.reshape(-1, Fw).T @ self.x.reshape(-1, self.x.shape[-1])
        self.db1 = dh.reshape(-1, Fw).sum(0)
        return dh @ self.W1
