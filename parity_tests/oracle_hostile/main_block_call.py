"""An attention whose `if __name__ == "__main__":` block sets its `d_k` through `int(...)`, a call
the oracle counts as plain, while the file shadows `int` with a function of its own that raises,
naming the process it ran in (test data for parity_tests/test_oracle_main_block_sizes.py): the
oracle runs those assignments where it imports the file, in the worker, never in its own process."""
import math
import os

import numpy as np


def int(x):                                            # noqa: A001 - the point of the file
    raise RuntimeError(f"the __main__ block's call ran in process {os.getpid()}")


def attention(Q, K, V, mask=None):
    s = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d_k)    # noqa: F821 - set under __main__
    if mask is not None:
        s = np.where(mask, s, -1e9)
    e = np.exp(s - s.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)) @ V


if __name__ == "__main__":
    d_k = int(64.0)
