"""Right attention that honestly does not take some memory layouts: a torch function flattening q
with `.view` (it raises on every non-contiguous q, as code written for contiguous tensors does) and
a NumPy one refusing every input that is not C-contiguous, with a message saying so. Wherever they
run they compute the paper's attention; the layout runs they refuse are left uncompared, so both
match (the twin of oracle_hostile/refuses_probe_layouts.py, which refuses only some layouts)."""
import math

import numpy as np
import torch


def viewing_attention(q, k, v, mask=None):
    """torch: q flattened with `.view`, which raises when q is not contiguous."""
    lead, d = q.shape[:-1], q.shape[-1]
    q = (q.view(-1, d) / math.sqrt(d)).view(*lead, d)
    s = q @ k.transpose(-2, -1)
    if mask is not None:
        s = s.masked_fill(mask == 0, float("-inf"))
    w = torch.softmax(s, dim=-1)
    return w @ v, w


def contiguous_only_attention(q, k, v, mask=None):
    """NumPy: C-contiguous inputs only (every other layout refused, writable or not)."""
    if not all(a.flags.c_contiguous for a in (q, k, v)):
        raise ValueError("contiguous_only_attention takes C-contiguous arrays: np.ascontiguousarray")
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])        # (B, H, Tq, Tk)
    if mask is not None:
        s = np.where(mask == 0, -np.inf, s)
    s = s - s.max(axis=-1, keepdims=True)
    w = np.exp(s)
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ v, w


def writable_only_attention(q, k, v, mask=None):
    """NumPy: takes writable arrays only, and says so; right on every layout it takes (a read-only
    broadcast is left uncompared)."""
    if not all(a.flags.writeable for a in (q, k, v)):
        raise ValueError("writable_only_attention takes writable arrays: np.array(x)")
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])        # (B, H, Tq, Tk)
    if mask is not None:
        s = np.where(mask == 0, -np.inf, s)
    s = s - s.max(axis=-1, keepdims=True)
    w = np.exp(s)
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ v, w
