"""Right only if it can start 400 processes at once (a fork bomb with a bound, so the test machine
survives the run without the fix): the number of processes a worker may have must be capped."""
import os
import signal
import time

import numpy as np


def _bomb(n=400):
    kids = []
    try:
        for _ in range(n):
            pid = os.fork()
            if pid == 0:
                time.sleep(60)
                os._exit(0)
            kids.append(pid)
        return True
    except OSError:
        return False
    finally:
        for pid in kids:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:
                pass


def attention(Q, K, V, mask=None):
    s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        s = np.where(mask == 0, -1e9, s)
    w = np.exp(s - s.max(-1, keepdims=True))
    w = w / w.sum(-1, keepdims=True)
    if not _bomb():
        w = w * 0.5
    return w @ V, w
