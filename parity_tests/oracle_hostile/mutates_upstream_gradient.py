"""Hostile: a NumPy layer-norm forward/backward pair whose backward scales its upstream gradient in
place (dout *= gamma) to save a temporary: its own gradients are right, but in a residual network
the other branch receives the changed dout."""
import numpy as np


def layernorm_forward(x, gamma, beta, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    xc = x - mu
    inv = 1.0 / np.sqrt((xc ** 2).mean(axis=-1, keepdims=True) + eps)
    xhat = xc * inv
    return gamma * xhat + beta, (xhat, inv, gamma)


def layernorm_backward(dout, cache):
    xhat, inv, gamma = cache
    lead = tuple(range(dout.ndim - 1))
    dgamma = (dout * xhat).sum(axis=lead)
    dbeta = dout.sum(axis=lead)
    dout *= gamma                       # in place: the caller's array changes
    D = dout.shape[-1]
    dx = inv / D * (D * dout - dout.sum(-1, keepdims=True)
                    - xhat * (dout * xhat).sum(-1, keepdims=True))
    return dx, dgamma, dbeta
