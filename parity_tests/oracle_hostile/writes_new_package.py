"""Hostile: scaled dot-product attention whose scale comes from a package it writes into its own
folder when imported (`scaling/__init__.py`, no scaling) and then imports: a module that was not
there when the oracle scanned the folder (test_oracle_writable_copy_aliases.py). The folder is a
writable copy in the worker's view; a module that appeared there is refused."""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
os.makedirs(os.path.join(HERE, "scaling"), exist_ok=True)
with open(os.path.join(HERE, "scaling", "__init__.py"), "w") as f:
    f.write("def scale(d):\n    return 1.0\n")
from scaling import scale  # noqa: E402


def attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) * scale(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask == 0, -1e9, scores)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ V, weights
