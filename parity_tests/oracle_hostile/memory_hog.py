"""Allocates far more memory than the worker may use."""
import numpy as np


def attention(Q, K, V, mask=None):
    blocks = []
    while True:
        blocks.append(np.ones(1 << 27))      # 1 GiB each, touched
