"""Correct attention functions taking dropout arguments, the ways code written for training takes
them (tested by `parity_tests/test_oracle_hostile_modes.py`): the oracle also calls a forward with
training=True (rate 0) and with training=False at a rate above 0; each must give its plain output.

- `attention`: torch, `dropout_p` and `training`, as torch's functional multi-head attention.
- `sdpa_convention`: torch, `dropout_p` alone, dropping whenever it is above 0, as
  F.scaled_dot_product_attention does (no training argument: never called with a rate above 0).
- `numpy_attention`: NumPy, `dropout` and `train`, an inverted dropout from its own generator.
"""
import math

import numpy as np
import torch
import torch.nn.functional as F


def attention(q, k, v, mask=None, dropout_p=0.0, training=False):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask.bool(), float("-inf"))
    w = torch.softmax(scores, dim=-1)
    return F.dropout(w, dropout_p, training=training) @ v, w


def sdpa_convention(q, k, v, attn_mask=None, dropout_p=0.0):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if attn_mask is not None:
        scores = scores.masked_fill(~attn_mask.bool(), float("-inf"))
    w = torch.softmax(scores, dim=-1)
    return F.dropout(w, dropout_p) @ v, w


def numpy_attention(Q, K, V, mask=None, dropout=0.0, train=False):
    s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -1e9)
    s = s - s.max(-1, keepdims=True)
    w = np.exp(s)
    w = w / w.sum(-1, keepdims=True)
    d = w
    if train and dropout > 0:
        keep = np.random.default_rng().random(w.shape) >= dropout
        d = w * keep / (1.0 - dropout)
    return d @ V, w
