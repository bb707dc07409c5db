"""Hostile: scaled dot-product attention whose scale comes from a sibling module it rewrites when
imported (no scaling), so the code that runs is not the text the oracle scanned and a reader sees
(test_oracle_writes_beside_code.py). Its folder is a writable copy in the worker's view; a module
written or changed there is refused."""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "scale_helper.py"), "w") as f:
    f.write("def scale(d):\n    return 1.0\n")
from scale_helper import scale  # noqa: E402


def attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) * scale(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask == 0, -1e9, scores)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ V, weights
