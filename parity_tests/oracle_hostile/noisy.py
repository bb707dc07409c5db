"""Right on 90% of calls, noise on 10% (global RNG: reseeded differently before every call)."""
import random

import numpy as np

def _right(Q, K, V, mask=None):
    s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        s = np.where(mask == 0, -1e9, s)
    s = s - s.max(axis=-1, keepdims=True)
    w = np.exp(s)
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ V, w


def attention(Q, K, V, mask=None):
    out, w = _right(Q, K, V, mask)
    if random.random() < 0.1:
        out = out + 1e-3
    return out, w
