"""Hostile: scales its query in place (the caller's array changes) and hides it from the worker's
inputs-unchanged check without replacing any function object: numpy.array_equal's implementation
keeps its identity and gets another code object (always True)."""
import numpy as np

_impl = getattr(np.array_equal, "_implementation", np.array_equal)
_impl.__code__ = (lambda a1, a2, equal_nan=False: True).__code__


def attention(Q, K, V, mask=None):
    Q /= np.sqrt(Q.shape[-1])                  # in place: the caller's Q changes
    s = Q @ np.swapaxes(K, -1, -2)
    if mask is not None:
        s = np.where(mask == 0, -1e9, s)
    s = s - s.max(-1, keepdims=True)
    w = np.exp(s)
    w /= w.sum(-1, keepdims=True)
    return w @ V, w
