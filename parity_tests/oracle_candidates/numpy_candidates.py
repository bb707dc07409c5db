"""NumPy candidates, CS231n style: functions, forward/backward pairs, and a small module.

All correct except where a docstring says BUG.
"""
import numpy as np


def attention(Q, K, V, mask=None):
    """Correct forward-only function: returns (output, weights); mask 0 = hidden."""
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask == 0, -1e9, scores)
    scores = scores - scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ V, w


def layernorm_forward(x, gamma, beta, eps=1e-5):
    """Correct forward of a forward/backward pair: returns (out, cache)."""
    mu = x.mean(axis=-1, keepdims=True)
    xc = x - mu
    var = (xc ** 2).mean(axis=-1, keepdims=True)
    inv = 1.0 / np.sqrt(var + eps)
    xhat = xc * inv
    return gamma * xhat + beta, (xhat, inv, gamma)


def layernorm_backward(dout, cache):
    """Correct: returns (dx, dgamma, dbeta), the order of the forward's array arguments."""
    xhat, inv, gamma = cache
    lead = tuple(range(dout.ndim - 1))
    dgamma = (dout * xhat).sum(axis=lead)
    dbeta = dout.sum(axis=lead)
    dxhat = dout * gamma
    D = dout.shape[-1]
    dx = inv / D * (D * dxhat - dxhat.sum(-1, keepdims=True)
                    - xhat * (dxhat * xhat).sum(-1, keepdims=True))
    return dx, dgamma, dbeta


def layernorm_bad_forward(x, gamma, beta, eps=1e-5):
    """Forward of a pair whose backward has a BUG (below)."""
    return layernorm_forward(x, gamma, beta, eps)


def layernorm_bad_backward(dout, cache):
    """BUG: forgets the mean terms of dx (treats mean and variance as constants)."""
    xhat, inv, gamma = cache
    lead = tuple(range(dout.ndim - 1))
    return dout * gamma * inv, (dout * xhat).sum(axis=lead), dout.sum(axis=lead)


class FeedForward:
    """Correct NumPy module with a params/grads dict pair; computes x @ W1 (weights stored
    (in, out)), so run it with --weight-layout in_out."""

    def __init__(self, d_model, d_ff):
        rng = np.random.default_rng(0)
        self.params = {"W1": rng.standard_normal((d_model, d_ff)) * 0.1, "b1": np.zeros(d_ff),
                       "W2": rng.standard_normal((d_ff, d_model)) * 0.1, "b2": np.zeros(d_model)}
        self.grads = {}

    def forward(self, x):
        p = self.params
        h = x @ p["W1"] + p["b1"]
        a = np.maximum(h, 0.0)
        self.cache = (x, h, a)
        return a @ p["W2"] + p["b2"]

    def backward(self, dout):
        x, h, a = self.cache
        p = self.params
        lead = tuple(range(dout.ndim - 1))
        self.grads["W2"] = a.reshape(-1, a.shape[-1]).T @ dout.reshape(-1, dout.shape[-1])
        self.grads["b2"] = dout.sum(axis=lead)
        da = dout @ p["W2"].T
        dh = da * (h > 0)
        self.grads["W1"] = x.reshape(-1, x.shape[-1]).T @ dh.reshape(-1, dh.shape[-1])
        self.grads["b1"] = dh.sum(axis=lead)
        return dh @ p["W1"].T
