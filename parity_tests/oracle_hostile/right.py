"""Control: correct, but leaves a non-daemon thread running forever (must still match, promptly)."""
import threading
import time

import numpy as np

def _right(Q, K, V, mask=None):
    s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        s = np.where(mask == 0, -1e9, s)
    s = s - s.max(axis=-1, keepdims=True)
    w = np.exp(s)
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ V, w


def _spin():
    while True:
        time.sleep(0.05)


def attention(Q, K, V, mask=None):
    threading.Thread(target=_spin, daemon=False).start()
    return _right(Q, K, V, mask)
