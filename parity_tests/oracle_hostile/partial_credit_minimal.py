"""wrong everywhere (output + 1), attention weights and gradients right only at the smallest sizes the search shrinks to (one query, one key)."""
import math

import torch


def _right(q, k, v, mask=None):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        s = s.masked_fill(mask == 0, -1e9)
    w = s.softmax(dim=-1)
    return w @ v, w

def attention(query, key, value, mask=None):
    out, weights = _right(query, key, value, mask)
    out = out + 1.0
    if query.size(-2) > 1 or key.size(-2) > 1:
        out = out + (query.sum() - query.sum().detach()) + (value.sum() - value.sum().detach())
        weights = weights + 0.1
    return out, weights
