"""Hostile: the attention comes from `attention_impl`, a module that exists only as compiled
bytecode (the test writes attention_impl.pyc beside this file, compiled from HIDDEN: a right NumPy
attention reading the garbage collector's object list); the parent's scan finds no
attention_impl.py to read, so nothing of what runs is scanned or readable."""
from attention_impl import attention  # noqa: F401

HIDDEN = '''
import gc

import numpy as np


def attention(q, k, v, mask=None):
    gc.get_objects()
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask.astype(bool), scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ v, w
'''
