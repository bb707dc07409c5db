"""Condition numbers for the few computations whose rounding error the inputs can amplify.

LayerNorm divides by the row's standard deviation: a rounding error of size u * |x| in x (or in the
mean) becomes u * |x| * rstd in xhat, rstd = 1 / sqrt(var + eps). For rows with a large offset or
a tiny spread, kappa = max|x| * rstd is far above 1 (up to max|x| / sqrt(eps): 1000 * |x| at
eps = 1e-6). Its input gradient additionally cancels completely for 1- and 2-wide rows (it is 0 in
exact arithmetic), leaving rounding noise of size u * kappa * rstd * |dy * gamma|.
Both twins are right to within these amounts; a comparison of LayerNorm on such inputs scales its
tolerance by these factors (the shared table stays tight for everything else).
"""
from __future__ import annotations

import numpy as np


def layernorm_rstd(x: np.ndarray, eps: float) -> np.ndarray:
    """(..., 1) 1 / sqrt(var + eps) per row, in float64."""
    x = np.asarray(x, dtype=np.float64)
    return 1.0 / np.sqrt(x.var(axis=-1, keepdims=True) + eps)


def layernorm_kappa(x: np.ndarray, eps: float) -> float:
    """max over rows of max|x_row| * rstd_row (>= 1): amplification of rounding into xhat."""
    x64 = np.asarray(x, dtype=np.float64)
    if x64.size == 0:
        return 1.0
    k = np.abs(x64).max(axis=-1, keepdims=True) * layernorm_rstd(x64, eps)
    return max(1.0, float(k.max()))


def layernorm_grad_kappa(x: np.ndarray, eps: float, dy_gamma: np.ndarray,
                         dx_scale: float) -> float:
    """Amplification for LayerNorm's input gradient: kappa times rstd * max|dy * gamma| relative to
    the gradient's own scale max(1, max|dx|) (large only where dx cancels to ~0)."""
    r = float(layernorm_rstd(x, eps).max()) if np.size(x) else 1.0
    g = float(np.abs(np.asarray(dy_gamma, dtype=np.float64)).max()) if np.size(dy_gamma) else 0.0
    return layernorm_kappa(x, eps) * max(1.0, r * g / max(1.0, dx_scale))
