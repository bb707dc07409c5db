"""Hostile: a NumPy layer-norm forward/backward pair whose backward ignores its cache and reads what
the last forward left in a module-level variable: right when each backward follows its own forward,
wrong in any network with two layers (the second forward overwrites the first one's state)."""
import numpy as np

_LAST = {}


def layernorm_forward(x, gamma, beta, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    xc = x - mu
    inv = 1.0 / np.sqrt((xc ** 2).mean(axis=-1, keepdims=True) + eps)
    xhat = xc * inv
    _LAST.update(xhat=xhat, inv=inv)
    return gamma * xhat + beta, (gamma,)


def layernorm_backward(dout, cache):
    (gamma,) = cache
    xhat, inv = _LAST["xhat"], _LAST["inv"]
    lead = tuple(range(dout.ndim - 1))
    dxhat = dout * gamma
    D = dout.shape[-1]
    dx = inv / D * (D * dxhat - dxhat.sum(-1, keepdims=True)
                    - xhat * (dxhat * xhat).sum(-1, keepdims=True))
    return dx, (dout * xhat).sum(axis=lead), dout.sum(axis=lead)
