"""Right, but each call sleeps just under the per-call --timeout: 39 examples x 2 calls used to
keep the oracle busy for up to 26 minutes per check (default 20 s per call), with no limit on the
whole search."""
import os
import time

import numpy as np

_PAUSE = float(os.environ.get("SLOW_ON_PURPOSE_S", "0.6"))


def attention(Q, K, V, mask=None):
    time.sleep(_PAUSE)
    s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        s = np.where(mask == 0, -1e9, s)
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ V, w
