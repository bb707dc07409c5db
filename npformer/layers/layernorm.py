"""Layer normalisation over the last dimension (Ba, Kiros & Hinton 2016), as torch.nn.LayerNorm.

    mu    = mean(x)                               over the last dim, D entries
    var   = mean((x - mu)^2)                      biased (divides by D, not D - 1)
    xhat  = (x - mu) / sqrt(var + eps)            eps inside the square root
    y     = gamma * xhat + beta

Backward, with G = dL/dy, r = 1 / sqrt(var + eps) and g = G * gamma (= dL/dxhat), all per row:

    dL/dbeta  = sum of G over every leading position
    dL/dgamma = sum of G * xhat over every leading position
    dL/dx     = r * (g - mean(g) - xhat * mean(g * xhat))

(The last line is dL/dx = r (g - mean(g)) minus the part through the variance; both means run over the
D entries of one row. It follows from dxhat_j/dx_k = r (delta_jk - 1/D - xhat_j xhat_k / D).)
"""
from typing import NamedTuple

import numpy as np

from npformer.layers.module import Module, Parameter


# -- functional pair -------------------------------------------------------------------------------
class LayerNormCache(NamedTuple):
    xhat: np.ndarray       # (..., D) normalised input
    rstd: np.ndarray       # (..., 1) 1 / sqrt(var + eps)
    gamma: np.ndarray      # (D,) scale


def layernorm_forward(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float = 1e-5):
    """y = gamma * (x - mean) / sqrt(var + eps) + beta over the last dim. Returns (y (..., D), cache)."""
    mu = x.mean(axis=-1, keepdims=True)                     # (..., 1)
    xc = x - mu                                             # (..., D)
    var = np.square(xc).mean(axis=-1, keepdims=True)        # (..., 1) biased variance
    rstd = 1.0 / np.sqrt(var + eps)                         # (..., 1)
    xhat = xc * rstd                                        # (..., D) xhat = (x - mu) / sqrt(var + eps)
    y = xhat * gamma + beta                                 # (..., D)
    return y, LayerNormCache(xhat, rstd, gamma)


def layernorm_backward(dout: np.ndarray, cache: LayerNormCache):
    """Returns (dx (..., D), dgamma (D,), dbeta (D,))."""
    xhat, rstd, gamma = cache
    D = xhat.shape[-1]
    dbeta = dout.reshape(-1, D).sum(axis=0)                 # (D,) every leading position a row
    dgamma = (dout * xhat).reshape(-1, D).sum(axis=0)       # (D,)
    g = dout * gamma                                        # (..., D) dL/dxhat
    g_mean = g.mean(axis=-1, keepdims=True)                 # (..., 1) mean(g)
    gx_mean = (g * xhat).mean(axis=-1, keepdims=True)       # (..., 1) mean(g * xhat)
    dx = (g - g_mean - xhat * gx_mean) * rstd               # (..., D)
    return dx, dgamma, dbeta                                # (..., D), (D,), (D,)


# -- module ----------------------------------------------------------------------------------------
class LayerNorm(Module):
    """LayerNorm over the last dim of width d_model: `weight` (gamma, ones) and `bias` (beta, zeros)."""

    def __init__(self, d_model: int, eps: float = 1e-5, dtype="float32"):
        super().__init__()
        self.d_model = int(d_model)
        self.eps = float(eps)
        self.dtype = np.dtype(dtype)
        self.weight = Parameter(np.ones(self.d_model, dtype=self.dtype))
        self.bias = Parameter(np.zeros(self.d_model, dtype=self.dtype))

    def forward(self, x: np.ndarray) -> np.ndarray:
        y, cache = layernorm_forward(x, self.weight.data, self.bias.data, self.eps)
        self._cache = (cache, y)
        return y

    def backward(self, dout: np.ndarray) -> np.ndarray:
        cache, _ = self._require_cache()
        dx, dgamma, dbeta = layernorm_backward(dout, cache)
        self.weight.accumulate(dgamma)
        self.bias.accumulate(dbeta)
        return dx

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, eps={self.eps}, dtype={self.dtype}"
