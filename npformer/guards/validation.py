"""The argument checks every guard of npformer.guards is built from.

Every message names the argument, what was expected and what came, so a user never meets a NumPy
broadcasting error from deep inside a layer. All checks run before any state changes.

They run once, at the public entry: calling a module, `module(...)`, runs the "call" check registered
for its class and then `forward(...)` on what the check returned (npformer.layers.module). Inside a
module, children run through `child.forward(...)`: their inputs are the module's own, already checked,
arrays. A model calls its top-level stages (embeddings, encoder, decoder, head) through the checked
entry, so a NaN/inf made inside it (a bad weight, a float32 overflow) is reported at the next stage
instead of reaching the logits silently. No state is kept between calls (nothing thread-local).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from npformer.guards.rules import (  # noqa: F401
    check_length,
    check_positive_int,
    check_probability,
    random_kind,
    refuse_masked,
)

FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def describe(x) -> str:
    """Short description of what came in, for error messages."""
    if isinstance(x, np.ndarray):
        return f"array of shape {x.shape} and dtype {x.dtype}"
    return f"{type(x).__name__}"


def check_float(name: str, x, *, dtype=None, ndim: int | None = None,
                shape: Sequence[int | None] | None = None, finite: bool = True,
                owner: str = "the module's") -> np.ndarray:
    """A floating array of the given dtype, rank and shape (None in `shape` matches any size).
    `owner` says whose dtype it is in the message ("the module's", "q's").

    Non-finite values are rejected when `finite` (NaN/inf would otherwise flow silently to the
    output).
    """
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{name}: expected a numpy array, got {describe(x)}")
    refuse_masked(name, x)
    if x.dtype not in FLOAT_DTYPES:
        raise TypeError(f"{name}: expected dtype float32 or float64, got {x.dtype}")
    if dtype is not None and x.dtype != np.dtype(dtype):
        raise TypeError(f"{name}: expected dtype {np.dtype(dtype)} ({owner} dtype; mixed "
                        f"dtypes are not converted silently), got {x.dtype}")
    if ndim is not None and x.ndim != ndim:
        raise ValueError(f"{name}: expected {ndim} dimensions, got shape {x.shape}")
    if shape is not None:
        ok = len(shape) == x.ndim and all(s is None or s == t for s, t in zip(shape, x.shape))
        if not ok:
            want = "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"
            raise ValueError(f"{name}: expected shape {want}, got {x.shape}")
    if finite and not np.isfinite(x).all():
        bad = int(np.size(x) - np.count_nonzero(np.isfinite(x)))
        raise ValueError(f"{name}: expected finite values, got {bad} NaN/inf entries")
    return x


def check_ids(name: str, ids, vocab_size: int, *, ndim: int | None = 2) -> np.ndarray:
    """Integer token ids in [0, vocab_size) of the given rank."""
    refuse_masked(name, ids)
    if not isinstance(ids, np.ndarray):
        try:
            ids = np.asarray(ids)
        except ValueError:                               # [[1, 2], [3]]: rows of unequal length
            raise ValueError(f"{name}: expected a rectangular (batch, seq) array of token ids; "
                             f"got rows of different lengths (pad them, e.g. with PAD = 0)") from None
    if ids.dtype == np.bool_ or not np.issubdtype(ids.dtype, np.integer):
        raise TypeError(f"{name}: expected integer token ids, got dtype {ids.dtype}")
    if ndim is not None and ids.ndim != ndim:
        raise ValueError(f"{name}: expected {ndim} dimensions (batch, seq), got shape {ids.shape}")
    if ids.size:
        lo, hi = int(ids.min()), int(ids.max())
        if lo < 0 or hi >= vocab_size:
            raise ValueError(f"{name}: expected token ids in [0, {vocab_size}), got values in "
                             f"[{lo}, {hi}]")
    return ids


def check_mask(name: str, mask, target: Sequence[int]) -> np.ndarray | None:
    """A keep-mask (bool, or 0/1 integers: nonzero = may attend) broadcastable to `target`.

    Returns a bool array (not broadcast), or None when mask is None.
    """
    if mask is None:
        return None
    refuse_masked(name, mask)
    mask = bool_mask(name, mask if isinstance(mask, np.ndarray) else np.asarray(mask))
    try:
        b = np.broadcast_shapes(mask.shape, tuple(target))
    except ValueError:
        b = None
    if b != tuple(target):
        raise ValueError(f"{name}: expected a shape broadcastable to {tuple(target)} "
                         f"(batch, heads, q_len, k_len), got {mask.shape}")
    return mask


def bool_mask(name: str, mask: np.ndarray) -> np.ndarray:
    """A bool keep-mask, or 0/1 integers (nonzero = keep) turned into one."""
    if mask.dtype != np.bool_:
        if not np.issubdtype(mask.dtype, np.integer):
            raise TypeError(f"{name}: expected a bool keep-mask (or 0/1 integers), got dtype "
                            f"{mask.dtype}")
        if mask.size and (mask.min() < 0 or mask.max() > 1):
            raise ValueError(f"{name}: expected 0/1 integer values, got values in "
                             f"[{mask.min()}, {mask.max()}]")
        mask = mask != 0
    return mask


def check_grad(name: str, dout, like: np.ndarray, *, finite: bool = False) -> np.ndarray:
    """An upstream gradient with exactly the shape and dtype of the forward output `like`, and, when
    `finite`, no NaN or inf (the backward the user called: one would make every gradient NaN
    silently). The checks of backwards a parent runs leave finiteness to that entry, so the backward
    pass does not scan every intermediate gradient (guards.register.outermost_backward)."""
    if not isinstance(dout, np.ndarray):
        raise TypeError(f"{name}: expected a numpy array, got {describe(dout)}")
    refuse_masked(name, dout)
    if dout.shape != like.shape:
        raise ValueError(f"{name}: expected shape {like.shape} (the forward output's), got "
                         f"{dout.shape}")
    if dout.dtype != like.dtype:
        raise TypeError(f"{name}: expected dtype {like.dtype} (the forward output's), got "
                        f"{dout.dtype}")
    if finite and not np.isfinite(dout).all():
        bad = int(dout.size - np.count_nonzero(np.isfinite(dout)))
        raise ValueError(f"{name}: expected a finite upstream gradient, got {bad} NaN/inf entries "
                         f"of {dout.size}")
    return dout


def check_dtype(name: str, dtype) -> np.dtype:
    """A parameter dtype, float32 or float64, given as a name ("float32"), numpy dtype or type."""
    try:
        dt = None if dtype is None else np.dtype(dtype)   # np.dtype(None) would mean float64
    except TypeError:
        dt = None
    if dt is None or dt not in FLOAT_DTYPES:
        raise ValueError(f"{name}: expected 'float32' or 'float64', got {dtype!r}")
    return dt


def check_rng(name: str, rng) -> np.random.Generator:
    """A numpy.random.Generator, or None for a fresh default_rng(0)."""
    if rng is None:
        return np.random.default_rng(0)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"{name}: expected a numpy.random.Generator or None, got {random_kind(rng)}")
    return rng
