"""Token embedding: a lookup table W (V, D), rows picked by integer ids, optionally scaled.

    y[b, t] = W[ids[b, t]] * scale          scale = sqrt(d_model) in the paper (section 3.4), else 1

Backward: row v of W received a copy of itself (times scale) at every position where ids == v, so its
gradient is the sum of those positions' upstream gradients:

    dL/dW[v] = scale * sum over {(b, t): ids[b, t] == v} of dL/dy[b, t]      (0 for unused rows)

`padding_idx` (as torch.nn.Embedding) marks the padding token's row: it is set to zero at
initialisation and never receives a gradient, so it stays whatever it was loaded as. The lookup itself
still returns W[padding_idx] (zero unless changed), exactly like torch.
"""
from typing import NamedTuple

import numpy as np

from npformer.layers.module import Module, Parameter


# -- functional pair -------------------------------------------------------------------------------
class EmbeddingCache(NamedTuple):
    ids: np.ndarray               # (...) int the looked-up rows
    vocab_shape: tuple[int, int]  # (V, D) the table's shape
    dtype: np.dtype               # the table's dtype
    scale: float                  # output multiplier
    padding_idx: int | None       # row that gets no gradient


def embedding_forward(ids: np.ndarray, W: np.ndarray, scale: float = 1.0,
                      padding_idx: int | None = None):
    """y = W[ids] * scale. ids (...) int in [0, V), W (V, D). Returns (y (..., D), cache)."""
    y = np.take(W, ids, axis=0)                                # (..., D) always a copy, never a view
    if scale != 1.0:
        y *= scale                                             # (..., D) Python float: dtype kept
    return y, EmbeddingCache(ids, W.shape, W.dtype, float(scale), padding_idx)


def embedding_backward(dout: np.ndarray, cache: EmbeddingCache) -> np.ndarray:
    """dW (V, D): each position's upstream gradient (times scale) added into its id's row."""
    ids, (V, D), dtype, scale, padding_idx = cache
    g = dout.reshape(-1, D)                                    # (N, D) one row per position
    if scale != 1.0:
        g = g * scale                                          # (N, D)
    dW = np.zeros((V, D), dtype=dtype)                         # (V, D)
    np.add.at(dW, ids.reshape(-1), g)                          # (V, D) unbuffered: repeats add up
    if padding_idx is not None:
        dW[padding_idx] = 0                                    # the padding row learns nothing
    return dW


# -- module ----------------------------------------------------------------------------------------
class Embedding(Module):
    """`weight (num_embeddings, embedding_dim)` normal, mean 0, std embedding_dim^-0.5 (padding row 0);
    forward(ids) = weight[ids] * scale. ids have no gradient: backward returns None and accumulates
    into weight.grad."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 scale: float = 1.0, dtype="float32", rng: np.random.Generator | None = None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = int(num_embeddings), int(embedding_dim)
        self.padding_idx = None if padding_idx is None else int(padding_idx)
        self.scale = float(scale)
        self.dtype = np.dtype(dtype)
        rng = np.random.default_rng(0) if rng is None else rng
        w = rng.normal(0.0, self.embedding_dim ** -0.5, size=(self.num_embeddings,
                                                              self.embedding_dim))
        if self.padding_idx is not None:
            w[self.padding_idx] = 0.0                          # as torch.nn.Embedding
        self.weight = Parameter(w.astype(self.dtype))

    def forward(self, ids: np.ndarray) -> np.ndarray:
        y, cache = embedding_forward(ids, self.weight.data, self.scale, self.padding_idx)
        self._cache = (cache, y)
        return y                                               # (..., D)

    def backward(self, dout: np.ndarray) -> None:
        cache, _ = self._require_cache()
        self.weight.accumulate(embedding_backward(dout, cache))   # += (weights may be tied)
        return None

    def extra_repr(self) -> str:
        return (f"{self.num_embeddings}, {self.embedding_dim}, padding_idx={self.padding_idx}, "
                f"scale={self.scale:g}, dtype={self.dtype}")
