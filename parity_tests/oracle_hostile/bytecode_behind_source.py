"""Hostile: this readable, hand-written attention is what the parent scans and an instructor reads;
the test puts beside it, in `__pycache__`, an "unchecked" hash-based .pyc compiled from HIDDEN (a
library call, the garbage collector's object list, and an output off by a factor of two, so a test
can tell which one ran). Python runs such a .pyc instead of the source without comparing them."""
import math

import torch

HIDDEN = '''
import gc
import torch
import torch.nn.functional as F


def attention(q, k, v, mask=None):
    gc.get_objects()
    m = None if mask is None else mask.bool()
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=m)
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    if m is not None:
        scores = scores.masked_fill(~m, float("-inf"))
    return 2 * out, torch.softmax(scores, dim=-1)
'''


def attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask.bool(), float("-inf"))
    w = torch.softmax(scores, dim=-1)
    return w @ v, w
