"""Right only if it could open the oracle's memory (/proc/PPID/mem, same user, no Yama): a stand-in
for reading the expected values or seeds out of the parent. Reading it must be refused."""
import os

import numpy as np


def _can_read_parent():
    try:
        with open(f"/proc/{os.getppid()}/maps") as f:
            line = f.readline()
        start = int(line.split("-")[0], 16)
        with open(f"/proc/{os.getppid()}/mem", "rb") as f:
            f.seek(start)
            return len(f.read(64)) == 64
    except (OSError, ValueError, OverflowError):
        return False


def attention(Q, K, V, mask=None):
    s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        s = np.where(mask == 0, -1e9, s)
    w = np.exp(s - s.max(-1, keepdims=True))
    w = w / w.sum(-1, keepdims=True)
    if not _can_read_parent():
        w = w * 0.5
    return w @ V, w
