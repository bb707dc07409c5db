"""NumPy attention that adds 1e-9 to its softmax denominator (a common guard against 0 / 0): its
outputs differ from the reference by about 1e-9 (below float32 rounding), and its float64 scale
`np.sqrt(d_k)` makes NumPy 2 return float64 for float32 inputs. Judged in float64: MISMATCH,
whichever example the search meets first (never WRONG_DTYPE from the float32 re-check)."""
import numpy as np


def attention(Q, K, V, mask=None):
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, scores, -1e9)
    e = np.exp(scores - scores.max(-1, keepdims=True))
    w = e / (e.sum(-1, keepdims=True) + 1e-9)
    return w @ V, w
