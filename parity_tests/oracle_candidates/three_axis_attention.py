"""Scaled dot-product attention written for 3-axis (batch, T, d) arrays, NumPy, no bmm: the keys
transposed with `k.transpose(0, 2, 1)`, which raises on (batch, heads, T, d) inputs; returns
(output, weights). Our own code; the BUG variant plants a softmax over the query axis."""
from __future__ import annotations

import numpy as np


def _softmax(s, axis):
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def three_axis_attention(q, k, v, mask=None, axis=-1):
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask == 0, -1e9, scores)
    weights = _softmax(scores, axis)
    return weights @ v, weights


def three_axis_attention_BUG(q, k, v, mask=None):
    return three_axis_attention(q, k, v, mask, axis=-2)
