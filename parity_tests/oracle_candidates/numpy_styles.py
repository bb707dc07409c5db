"""NumPy candidates in the styles people write them. Correct unless a docstring says BUG."""
import numpy as np


class RowBiasFFN:
    """Feed-forward with (1, n) biases, weights (in, out), x @ W + b; hand-written backward."""

    def __init__(self, d_model, d_ff):
        rng = np.random.default_rng()
        self.W1 = rng.standard_normal((d_model, d_ff)) * 0.1
        self.b1 = rng.standard_normal((1, d_ff)) * 0.1
        self.W2 = rng.standard_normal((d_ff, d_model)) * 0.1
        self.b2 = rng.standard_normal((1, d_model)) * 0.1

    def forward(self, x):
        self.x = x
        self.h = x @ self.W1 + self.b1
        self.a = np.maximum(self.h, 0.0)
        return self.a @ self.W2 + self.b2

    def backward(self, dout):
        D, F = self.W1.shape
        self.dW2 = self.a.reshape(-1, F).T @ dout.reshape(-1, D)
        self.db2 = dout.reshape(-1, D).sum(axis=0, keepdims=True)
        dh = (dout @ self.W2.T) * (self.h > 0)
        self.dW1 = self.x.reshape(-1, D).T @ dh.reshape(-1, F)
        self.db1 = dh.reshape(-1, F).sum(axis=0, keepdims=True)
        return dh @ self.W1.T


class RowBiasFFNBadGrad(RowBiasFFN):
    """BUG: the gradient of b1 ignores the ReLU (sums the upstream gradient before the mask)."""

    def backward(self, dout):
        dx = super().backward(dout)
        F = self.W1.shape[1]
        self.db1 = (dout @ self.W2.T).reshape(-1, F).sum(axis=0, keepdims=True)
        return dx


class GatedFFN(RowBiasFFN):
    """A feed-forward with an extra randomly initialised gate the reference has no counterpart for."""

    def __init__(self, d_model, d_ff):
        super().__init__(d_model, d_ff)
        self.gate = np.random.default_rng().standard_normal((1, d_ff))

    def forward(self, x):
        self.x = x
        self.h = x @ self.W1 + self.b1
        self.a = np.maximum(self.h, 0.0) * self.gate
        return self.a @ self.W2 + self.b2


class HiddenGainLayerNorm:
    """LayerNorm keeping its gain and shift in a dict under names the oracle does not know."""

    bad = False

    def __init__(self, d_model, eps=1e-5):
        self.eps = eps
        self.p = {"gain": np.ones(d_model), "shift": np.zeros(d_model)}
        self.grads = {}

    def forward(self, x):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        self.inv = 1.0 / np.sqrt(var + self.eps)
        self.xhat = (x - mu) * self.inv
        return self.p["gain"] * self.xhat + self.p["shift"]

    def backward(self, dout):
        lead = tuple(range(dout.ndim - 1))
        self.grads["gain"] = dout.sum(lead) if self.bad else (dout * self.xhat).sum(lead)
        self.grads["shift"] = dout.sum(lead)
        dxhat = dout * self.p["gain"]
        D = dout.shape[-1]
        return self.inv / D * (D * dxhat - dxhat.sum(-1, keepdims=True)
                               - self.xhat * (dxhat * self.xhat).sum(-1, keepdims=True))


class HiddenGainLayerNormBad(HiddenGainLayerNorm):
    """BUG: the gradient of the gain forgets x-hat (a bug a gain left at 1 would hide)."""

    bad = True


class ListHeadsMHA:
    """Multi-head attention with per-head lists of (d_model, d_k) matrices (x @ W), no biases;
    forward only."""

    def __init__(self, d_model, num_heads):
        rng = np.random.default_rng()
        dk = d_model // num_heads
        self.Wq = [rng.standard_normal((d_model, dk)) for _ in range(num_heads)]
        self.Wk = [rng.standard_normal((d_model, dk)) for _ in range(num_heads)]
        self.Wv = [rng.standard_normal((d_model, dk)) for _ in range(num_heads)]
        self.Wo = rng.standard_normal((d_model, d_model))

    def forward(self, query, key, value, mask=None):
        heads = []
        for Wq, Wk, Wv in zip(self.Wq, self.Wk, self.Wv):
            q, k, v = query @ Wq, key @ Wk, value @ Wv
            s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
            if mask is not None:
                s = np.where(mask[:, 0] == 0, -1e9, s)
            s = np.exp(s - s.max(-1, keepdims=True))
            heads.append((s / s.sum(-1, keepdims=True)) @ v)
        return np.concatenate(heads, axis=-1) @ self.Wo


class ListHeadsMHAReversed(ListHeadsMHA):
    """BUG: concatenates the heads in reverse order."""

    def forward(self, query, key, value, mask=None):
        self.Wq, self.Wk, self.Wv = self.Wq[::-1], self.Wk[::-1], self.Wv[::-1]
        try:
            out = super().forward(query, key, value, mask)
        finally:
            self.Wq, self.Wk, self.Wv = self.Wq[::-1], self.Wk[::-1], self.Wv[::-1]
        return out


class LazyFFN:
    """Feed-forward whose weights are created by the first forward, (out, in) layout."""

    def __init__(self, d_model, d_ff):
        self.d_ff = d_ff
        self.W1 = self.b1 = self.W2 = self.b2 = None

    def forward(self, x):
        if self.W1 is None:
            rng = np.random.default_rng()
            D = x.shape[-1]
            self.W1, self.b1 = rng.standard_normal((self.d_ff, D)), np.zeros(self.d_ff)
            self.W2, self.b2 = rng.standard_normal((D, self.d_ff)), np.zeros(D)
        return np.maximum(x @ self.W1.T + self.b1, 0.0) @ self.W2.T + self.b2


class ListHeadsMHAWithBias:
    """Per-head lists of (d_model, d_k) matrices AND of (d_k,) biases, an output matrix and bias."""

    shift = 0

    def __init__(self, d_model, num_heads):
        rng = np.random.default_rng()
        dk = d_model // num_heads
        for n in ("q", "k", "v"):
            setattr(self, f"W{n}", [rng.standard_normal((d_model, dk)) for _ in range(num_heads)])
            setattr(self, f"b{n}", [rng.standard_normal(dk) for _ in range(num_heads)])
        self.Wo, self.bo = rng.standard_normal((d_model, d_model)), rng.standard_normal(d_model)

    def forward(self, query, key, value, mask=None):
        heads = []
        H = len(self.Wq)
        for i in range(H):
            j = (i + self.shift) % H
            q = query @ self.Wq[i] + self.bq[i]
            k = key @ self.Wk[i] + self.bk[i]
            v = value @ self.Wv[i] + self.bv[j]
            s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
            if mask is not None:
                s = np.where(mask[:, 0] == 0, -1e9, s)
            s = np.exp(s - s.max(-1, keepdims=True))
            heads.append((s / s.sum(-1, keepdims=True)) @ v)
        return np.concatenate(heads, axis=-1) @ self.Wo + self.bo


class ListHeadsMHAWithBiasBad(ListHeadsMHAWithBias):
    """BUG: head i adds the value bias of head i+1."""

    shift = 1


class SinusoidTable:
    """NumPy positional module whose forward returns the (T, d) table; the caller adds it."""

    def __init__(self, d_model, max_len=512):
        pos = np.arange(max_len)[:, None]
        i = np.arange(d_model)[None, :]
        angle = pos / np.power(10000.0, (2 * (i // 2)) / d_model)
        self.table = np.where(i % 2 == 0, np.sin(angle), np.cos(angle))

    def forward(self, x):
        return self.table[: x.shape[1]].astype(x.dtype)


class SinusoidTableOffByOne(SinusoidTable):
    """BUG: starts the positions at 1."""

    def forward(self, x):
        return self.table[1: x.shape[1] + 1].astype(x.dtype)
