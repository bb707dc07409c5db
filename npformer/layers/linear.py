"""Linear (fully connected) layer in torch's layout: W is (out_features, in_features).

    y = x W^T + b                     x (..., I), W (O, I), b (O,), y (..., O)

Backward, with G = dL/dy (..., O) and the leading dims flattened into N rows:

    dL/dx = G W                       (..., O) @ (O, I) -> (..., I)
    dL/dW = G^T x                     (O, N) @ (N, I)   -> (O, I)   (sum over every leading position)
    dL/db = sum of G over the rows    (O,)
"""
import math
from typing import NamedTuple

import numpy as np

from npformer.layers.module import Module, Parameter


# -- functional pair -------------------------------------------------------------------------------
class LinearCache(NamedTuple):
    x: np.ndarray          # (..., I) the input
    W: np.ndarray          # (O, I) the weight
    has_bias: bool         # whether a bias was added (db is returned only then)


def linear_forward(x: np.ndarray, W: np.ndarray, b: np.ndarray | None):
    """y = x @ W.T + b over any number of leading dims. Returns (y (..., O), cache).

    The leading dims are flattened into rows first: one (N, I) @ (I, O) GEMM is much faster than
    NumPy's stacked matmul, which calls BLAS once per leading index (B small GEMMs of T rows).
    """
    O, I = W.shape
    x2 = x.reshape(-1, I)                         # (N, I)
    y = x2 @ W.T                                  # (N, I) @ (I, O) -> (N, O); W.T is a view, no copy
    if b is not None:
        y += b                                    # (N, O) + (O,)
    return y.reshape(*x.shape[:-1], O), LinearCache(x, W, b is not None)   # (..., O)


def linear_backward(dout: np.ndarray, cache: LinearCache):
    """Returns (dx (..., I), dW (O, I), db (O,) or None)."""
    x, W, has_bias = cache
    O, I = W.shape
    g2 = dout.reshape(-1, O)                      # (N, O) every leading position is a row
    x2 = x.reshape(-1, I)                         # (N, I)
    dx = (g2 @ W).reshape(x.shape)                # (N, O) @ (O, I) -> (N, I) -> (..., I)
    dW = g2.T @ x2                                # (O, N) @ (N, I) -> (O, I)
    db = g2.sum(axis=0) if has_bias else None     # (O,)
    return dx, dW, db


# -- module ----------------------------------------------------------------------------------------
class Linear(Module):
    """As torch.nn.Linear, `bias` None when bias=False: Xavier-uniform weight and zero bias, drawn
    from `rng` (np.random.default_rng(0) when None)."""

    # the forward function this module runs; npformer.fast.linear can give one instance a faster
    # function with the same signature and results
    functional = staticmethod(linear_forward)

    def __init__(self, in_features: int, out_features: int, bias: bool = True, dtype="float32",
                 rng: np.random.Generator | None = None):
        super().__init__()
        self.in_features, self.out_features = int(in_features), int(out_features)
        self.dtype = np.dtype(dtype)
        rng = np.random.default_rng(0) if rng is None else rng
        # Xavier-uniform (Glorot & Bengio 2010): U(-a, a), a = sqrt(6 / (fan_in + fan_out)), drawn in
        # float64 and then cast (float32 and float64 models from one seed agree up to rounding)
        a = math.sqrt(6.0 / (self.in_features + self.out_features))
        w = rng.uniform(-a, a, size=(self.out_features, self.in_features))
        self.weight = Parameter(w.astype(self.dtype))                   # (O, I)
        self.bias = Parameter(np.zeros(self.out_features, dtype=self.dtype)) if bias else None

    def forward(self, x: np.ndarray) -> np.ndarray:
        b = None if self.bias is None else self.bias.data
        y, cache = self.functional(x, self.weight.data, b)    # linear_forward: (..., O)
        self._cache = (cache, y)
        return y

    def backward(self, dout: np.ndarray) -> np.ndarray:
        cache, _ = self._require_cache()
        dx, dW, db = linear_backward(dout, cache)
        self.weight.accumulate(dW)                            # += dW: weights may be tied
        if self.bias is not None:
            self.bias.accumulate(db)
        return dx

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}, dtype={self.dtype}")
