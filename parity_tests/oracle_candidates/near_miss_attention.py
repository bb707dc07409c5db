"""Attention functions (forward only, returning (output, weights); mask 0 = hidden) that are the
paper's computation but for a small constant: a MISMATCH in a float64 check, with a note naming it
a near miss. (Attention whose softmax is taken in float32 is an accepted convention: it is checked
again in float32 and matches.) `attention_unscaled` is plainly wrong: its own cause is named, not
the near miss."""
import numpy as np


def _scores(Q, K, mask, scale=True):
    s = Q @ np.swapaxes(K, -1, -2)
    if scale:
        s = s / np.sqrt(Q.shape[-1])
    if mask is not None:
        s = np.where(mask == 0, -1e9, s)
    return s - s.max(axis=-1, keepdims=True)


def attention_denominator_eps(Q, K, V, mask=None):
    e = np.exp(_scores(Q, K, mask))
    w = e / (e.sum(axis=-1, keepdims=True) + 1e-8)         # the constant
    return w @ V, w


def attention_unscaled(Q, K, V, mask=None):
    e = np.exp(_scores(Q, K, mask, scale=False))
    w = e / e.sum(axis=-1, keepdims=True)
    return w @ V, w
