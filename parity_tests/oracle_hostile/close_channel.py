"""Right, but closes every inherited file descriptor above 2 (the protocol pipes) and points fds 1
and 2 at each other, hoping the oracle mistakes a lost answer for a pass. It must be `crashed`."""
import os

import numpy as np


def attention(Q, K, V, mask=None):
    for fd in range(3, 256):
        try:
            os.close(fd)
        except OSError:
            pass
    os.dup2(1, 2)
    s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        s = np.where(mask == 0, -1e9, s)
    w = np.exp(s - s.max(-1, keepdims=True))
    w = w / w.sum(-1, keepdims=True)
    return w @ V, w
