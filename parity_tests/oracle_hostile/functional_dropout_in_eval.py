"""Hostile: a functional attention taking `dropout_p` and `training` that drops attention weights
at dropout_p even when not training (right whenever dropout_p is 0, as the main run calls it)."""
import math

import torch


def attention(q, k, v, mask=None, dropout_p=0.0, training=False):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask.bool(), float("-inf"))
    w = torch.softmax(scores, dim=-1)
    w = torch.nn.functional.dropout(w, dropout_p, training=True)    # `training` ignored
    return w @ v, w
