"""Wrong, unless a `solution` module is importable: an instructor's solution.py in the folder the
oracle runs from, which the oracle used to put on the worker's sys.path."""
import numpy as np

try:
    from solution import attention as _solution
except ImportError:
    _solution = None


def attention(Q, K, V, mask=None):
    if _solution is not None:
        return _solution(Q, K, V, mask)
    B, H, T, _ = Q.shape
    return np.zeros((B, H, T, V.shape[-1])), np.full((B, H, T, K.shape[-2]), 1.0 / K.shape[-2])
