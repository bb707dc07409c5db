"""Right scaled dot-product attention that writes beside itself, as student code often does: a
`logs/` folder made when the module is imported, a cache file written at every call
(test_oracle_writes_beside_code.py). The oracle runs it on a throwaway copy of its folder."""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
LOGS = os.path.join(HERE, "logs")
os.makedirs(LOGS, exist_ok=True)


def attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask == 0, -1e9, scores)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    with open(os.path.join(LOGS, "last_shape.txt"), "w") as f:
        f.write(str(weights.shape))
    return weights @ V, weights
