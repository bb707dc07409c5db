"""Hostile: an attention right only on inputs it has seen before. KNOWN holds the digests of the
query arrays one run of the public search handed over (the test fills it in from a run of its own;
a student would keep the reference's answers for them, captured by running the oracle on a
recording function). Anything else gets the scores unscaled. While every run of `check` with the
same --seed drew the same values, this matched."""
import hashlib

import numpy as np

KNOWN: set = set()


def attention(q, k, v, mask=None):
    seen = hashlib.sha1(np.ascontiguousarray(q).tobytes()).hexdigest() in KNOWN
    s = q @ np.swapaxes(k, -1, -2) / (np.sqrt(q.shape[-1]) if seen else 1.0)
    if mask is not None:
        s = np.where(mask, s, -1e30)
    w = np.exp(s - s.max(-1, keepdims=True))
    return (w / w.sum(-1, keepdims=True)) @ v
