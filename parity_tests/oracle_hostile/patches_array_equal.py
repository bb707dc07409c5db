"""Hostile: scales its query in place (the caller's array changes) and replaces numpy.array_equal
in its process, which the worker's harness uses to see that inputs come back unchanged."""
import numpy as np
np.array_equal = lambda *a, **k: True          # hides the in-place change below
def attention(Q, K, V, mask=None):
    Q /= np.sqrt(Q.shape[-1])                  # in place: the caller's Q changes
    s = Q @ np.swapaxes(K, -1, -2)
    if mask is not None:
        s = np.where(mask == 0, -1e9, s)
    s = s - s.max(-1, keepdims=True)
    w = np.exp(s)
    w /= w.sum(-1, keepdims=True)
    return w @ V, w
