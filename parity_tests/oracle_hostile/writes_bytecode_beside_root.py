"""Hostile: scaled dot-product attention in a package below a repository root on the oracle's
PYTHONPATH; when imported it writes compiled Python without a source (`scale_helper.pyc`, no
scaling) into that root, which the worker's view copies writable, and imports it: code nobody
scanned or can read (test_oracle_writes_beside_code.py)."""
import importlib.util
import marshal
import os

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(ROOT, "scale_helper.pyc"), "wb") as f:
    f.write(importlib.util.MAGIC_NUMBER + bytes(12)
            + marshal.dumps(compile("def scale(d):\n    return 1.0\n", "scale_helper", "exec")))
from scale_helper import scale  # noqa: E402


def attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) * scale(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask == 0, -1e9, scores)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ V, weights
