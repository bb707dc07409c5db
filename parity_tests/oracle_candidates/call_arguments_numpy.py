"""Right NumPy code taking `is_causal` and `scale` as F.scaled_dot_product_attention does: it
matches when the oracle calls it with is_causal=True (and no mask) against a causal reference."""
import numpy as np


def attention(q, k, v, mask=None, is_causal=False, scale=None):
    s = q @ np.swapaxes(k, -1, -2) * (1 / np.sqrt(q.shape[-1]) if scale is None else scale)
    if is_causal:
        s = np.where(np.tril(np.ones((q.shape[-2], k.shape[-2]), dtype=bool)), s, -np.inf)
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    s = s - s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    return (p / p.sum(axis=-1, keepdims=True)) @ v
