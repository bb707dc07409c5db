"""Attention functions that forget the 1/sqrt(d) scale when an input is not C-contiguous (what an
attention's per-head q, k, v are after a transpose). Both matched: the oracle handed every input
over as a fresh contiguous array."""
import math

import numpy as np
import torch


def attention(q, k, v, mask=None):
    scale = math.sqrt(q.shape[-1]) if q.is_contiguous() and k.is_contiguous() else 1.0
    s = q @ k.transpose(-2, -1) / scale
    if mask is not None:
        s = s.masked_fill(mask == 0, float("-inf"))
    p = torch.softmax(s, dim=-1)
    return p @ v, p


def numpy_attention(q, k, v, mask=None):
    scale = np.sqrt(q.shape[-1]) if q.flags.c_contiguous else 1.0
    s = q @ np.swapaxes(k, -1, -2) / scale
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    p = e / e.sum(-1, keepdims=True)
    return p @ v, p
