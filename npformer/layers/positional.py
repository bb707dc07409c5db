"""Positional encodings, added to the (scaled) token embeddings: fixed sinusoids or a learned table.

The paper's sinusoids (section 3.5), for position pos and column pairs (2i, 2i+1):

    PE[pos, 2i]   = sin(pos / 10000^(2i / d_model))
    PE[pos, 2i+1] = cos(pos / 10000^(2i / d_model))

Each pair of columns is a rotation at its own frequency, from 1 down towards 1/10000, so PE[pos + k] is
a linear map of PE[pos] fixed by k (what the paper hoped lets attention use relative positions). With an odd
d_model the last column is a sine without its cosine partner.

Both encodings compute y = x + table[offset : offset + T] and share one functional pair:

    dL/dx     = dL/dy                                        (addition passes the gradient through)
    dL/dtable = dL/dy summed over the batch, in rows offset .. offset + T - 1, zero elsewhere

`offset` is the position of the first of the T tokens (non-zero when decoding with a KV cache).
"""
from typing import NamedTuple

import numpy as np

from npformer.layers.module import Module, Parameter


def sinusoidal_table(max_len: int, d_model: int, dtype="float32") -> np.ndarray:
    """The (max_len, d_model) sinusoid table above, computed in float64 and then cast to dtype."""
    pos = np.arange(max_len, dtype=np.float64)[:, None]         # (L, 1) positions 0 .. L-1
    two_i = np.arange(0, d_model, 2, dtype=np.float64)          # (ceil(D/2),) even columns 2i
    angle = pos / np.power(10000.0, two_i / d_model)            # (L, ceil(D/2)) pos / 10000^(2i/D)
    pe = np.empty((max_len, d_model), dtype=np.float64)         # (L, D)
    pe[:, 0::2] = np.sin(angle)                                 # even columns
    pe[:, 1::2] = np.cos(angle[:, : d_model // 2])              # odd columns (one fewer if D is odd)
    return pe.astype(dtype)


# -- functional pair (shared by both encodings) ----------------------------------------------------
class PositionalCache(NamedTuple):
    offset: int                   # first position used
    length: int                   # T, number of positions used
    table_shape: tuple[int, int]  # (max_len, D)


def positional_forward(x: np.ndarray, table: np.ndarray, offset: int = 0):
    """y = x + table[offset : offset + T]. x (B, T, D), table (max_len, D). Returns (y, cache)."""
    T = x.shape[-2]
    y = x + table[offset: offset + T]                           # (B, T, D) + (T, D)
    return y, PositionalCache(offset, T, table.shape)


def positional_backward(dout: np.ndarray, cache: PositionalCache):
    """Returns (dx (B, T, D), dtable (max_len, D))."""
    offset, T, table_shape = cache
    dtable = np.zeros(table_shape, dtype=dout.dtype)            # (L, D) unused rows get 0
    dtable[offset: offset + T] = dout.reshape(-1, T, table_shape[1]).sum(axis=0)   # (T, D)
    return dout, dtable


# -- modules ---------------------------------------------------------------------------------------
class _PositionalEncoding(Module):
    """The forward of both encodings; a subclass's `_table()` says where the table lives."""

    def __init__(self, d_model: int, max_len: int, dtype):
        super().__init__()
        self.d_model, self.max_len, self.dtype = int(d_model), int(max_len), np.dtype(dtype)

    def forward(self, x: np.ndarray, offset: int = 0) -> np.ndarray:
        y, cache = positional_forward(x, self._table(), offset)        # (B, T, D)
        self._cache = (cache, y)
        return y

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, max_len={self.max_len}, dtype={self.dtype}"


class SinusoidalPositionalEncoding(_PositionalEncoding):
    """x + PE[offset : offset + T] with the fixed table `.pe (max_len, d_model)` (not a parameter)."""

    def __init__(self, d_model: int, max_len: int = 512, dtype="float32"):
        super().__init__(d_model, max_len, dtype)
        self.pe = sinusoidal_table(self.max_len, self.d_model, self.dtype)

    def _table(self) -> np.ndarray:
        return self.pe

    def backward(self, dout: np.ndarray) -> np.ndarray:
        self._require_cache()
        return dout                                             # the table is fixed: dx only


class LearnedPositionalEncoding(_PositionalEncoding):
    """x + weight[offset : offset + T] with a trained `weight (max_len, d_model)`, normal with std 0.02."""

    def __init__(self, d_model: int, max_len: int = 512, dtype="float32",
                 rng: np.random.Generator | None = None):
        super().__init__(d_model, max_len, dtype)
        rng = np.random.default_rng(0) if rng is None else rng
        self.weight = Parameter(rng.normal(0.0, 0.02, size=(self.max_len, self.d_model))
                                .astype(self.dtype))

    def _table(self) -> np.ndarray:
        return self.weight.data

    def backward(self, dout: np.ndarray) -> np.ndarray:
        cache, _ = self._require_cache()
        dx, dtable = positional_backward(dout, cache)
        self.weight.accumulate(dtable)
        return dx


def make_positional(config, rng: np.random.Generator | None = None):
    """The encoding config.positional names, sized by the config (d_model, max_len, dtype)."""
    if config.positional == "sinusoidal":
        return SinusoidalPositionalEncoding(config.d_model, config.max_len, config.dtype)
    if config.positional == "learned":
        return LearnedPositionalEncoding(config.d_model, config.max_len, config.dtype, rng)
    raise ValueError(f"config.positional: expected 'sinusoidal' or 'learned', got "
                     f"{config.positional!r}")
