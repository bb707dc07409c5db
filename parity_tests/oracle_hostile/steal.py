"""Wrong on its own, but copies a classmate's work at run time: at its first call it waits up to 4 s for another
submission's private copy (/tmp/oracle-sub-*) marked STEAL-ME to appear while the class is graded
with --jobs 2, then executes that file's `attention` instead of its own. A worker must not read the
other students' submissions."""
import glob
import os
import time

import numpy as np


_TRIED = []


def _stolen():
    if _TRIED:
        return _TRIED[0]
    _TRIED.append(None)
    end = time.monotonic() + 4.0
    while time.monotonic() < end:
        for p in glob.glob("/tmp/oracle-sub-*/*.py"):
            try:
                with open(p) as f:
                    src = f.read()
            except OSError:
                continue
            if "STEAL" + "-ME" in src:
                ns = {"__name__": "classmate"}
                exec(compile(src, p, "exec"), ns)
                _TRIED[0] = ns["attention"]
                return _TRIED[0]
        time.sleep(0.1)
    return None


def attention(Q, K, V, mask=None):
    f = _stolen()
    if f is not None:
        return f(Q, K, V, mask)
    B, H, T, _ = Q.shape
    return np.zeros((B, H, T, V.shape[-1])), None
