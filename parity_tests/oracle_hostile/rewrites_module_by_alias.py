"""Hostile: scaled dot-product attention whose scale comes from a sibling module it rewrites when
imported (no scaling), then imports through another spelling of its own folder (a leading `//`,
which names the same folder), hoping a module is checked against the text the oracle scanned only
under the folder's plain spelling (test_oracle_writes_beside_code.py)."""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "scale_helper.py"), "w") as f:
    f.write("def scale(d):\n    return 1.0\n")
sys.path.insert(0, "/" + HERE)
from scale_helper import scale  # noqa: E402


def attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) * scale(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask == 0, -1e9, scores)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ V, weights
