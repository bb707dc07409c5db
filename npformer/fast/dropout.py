"""npformer.layers.dropout's mask draw and apply, faster and with the same bits.

The draw: the plain module's `rng.random(x.shape) >= p` makes a float64 array of x's size (8 bytes
per element, through main memory) and then compares it. Drawn in blocks into one cache-sized
buffer instead, the generator produces the same numbers in the same order (a Generator's stream
does not depend on how its draws are cut), so the mask and the generator's state afterwards are
the plain ones. The generator is sequential: the draw stays in the calling thread.

The apply: y = x * mask * scale and dx = dout * mask * scale, in place in the output, on row
ranges over threads (on one thread, the plain expression: two passes, nothing to fuse).
"""
from __future__ import annotations

import numpy as np

from npformer.fast.rows import run_rows
from npformer.layers.dropout import DropoutCache

__all__ = ["DRAW_BLOCK", "draw_keep_mask", "apply_mask", "dropout_forward", "dropout_backward"]

DRAW_BLOCK = 65536                     # float64 numbers per block: 512 KB, inside the L2 cache


def draw_keep_mask(rng: np.random.Generator, shape: tuple[int, ...], p: float) -> np.ndarray:
    """`rng.random(shape) >= p`, drawn in blocks of DRAW_BLOCK numbers: the same mask, and the same
    generator state afterwards."""
    mask = np.empty(shape, dtype=bool)
    flat = mask.reshape(-1)
    buf = np.empty(min(DRAW_BLOCK, flat.size), dtype=np.float64)
    for s in range(0, flat.size, DRAW_BLOCK):
        n = min(DRAW_BLOCK, flat.size - s)
        rng.random(out=buf[:n])
        np.greater_equal(buf[:n], p, out=flat[s:s + n])
    return mask


def apply_mask(x: np.ndarray, mask: np.ndarray, scale, threads: int = 1) -> np.ndarray:
    """x * mask * scale (x and mask of one shape), in one new array, rows over threads."""
    x = np.ascontiguousarray(x)
    y = np.empty_like(x)
    if x.size == 0:
        return y
    last = x.shape[-1] if x.ndim else 1
    x2, m2, y2 = (a.reshape(-1, last) for a in (x, np.ascontiguousarray(mask), y))

    def job(lo, hi):
        o = y2[lo:hi]
        np.multiply(x2[lo:hi], m2[lo:hi], out=o)
        o *= scale
    run_rows(job, x2.shape[0], x.size, threads)
    return y


def dropout_forward(x: np.ndarray, p: float, mask: np.ndarray | None, threads: int = 1):
    """npformer.layers.dropout.dropout_forward's (y, cache) for a checked mask of x's shape (or
    None: the identity)."""
    scale = x.dtype.type(1.0 / (1.0 - p))
    if mask is None:
        return x, DropoutCache(None, scale)
    if threads == 1:
        return x * mask * scale, DropoutCache(mask, scale)          # the plain expression
    return apply_mask(x, mask, scale, threads), DropoutCache(mask, scale)


def dropout_backward(dout: np.ndarray, cache: DropoutCache, threads: int = 1) -> np.ndarray:
    """npformer.layers.dropout.dropout_backward: dout * mask * scale, rows over threads."""
    if cache.mask is None:
        return dout
    if threads == 1 or dout.shape != cache.mask.shape:
        return dout * cache.mask * cache.scale
    return apply_mask(dout, cache.mask, cache.scale, threads)
