"""Hostile: a functional attention taking `dropout_p` and `training` that ignores dropout_p: in
training it drops 10% of the attention weights at a rate of its own (right when not training)."""
import math

import torch


def attention(q, k, v, mask=None, dropout_p=0.0, training=False):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask.bool(), float("-inf"))
    w = torch.softmax(scores, dim=-1)
    if training:
        w = torch.nn.functional.dropout(w, 0.1, training=True)     # dropout_p ignored
    return w @ v, w
