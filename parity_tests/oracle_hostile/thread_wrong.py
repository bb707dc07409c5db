"""Wrong, and leaves a non-daemon thread spinning (the old oracle never exited)."""
import threading

import numpy as np


def _spin():
    x = 0
    while True:
        x += 1


def attention(Q, K, V, mask=None):
    threading.Thread(target=_spin, daemon=False).start()
    B, H, T, _ = Q.shape
    return np.zeros((B, H, T, V.shape[-1])), None
