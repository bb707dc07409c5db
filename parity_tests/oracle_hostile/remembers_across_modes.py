"""Hostile: a functional attention taking `dropout_p` and `training` that, in training, drops 10%
of the attention weights at a rate of its own (dropout_p ignored), hidden by memory: every output
computed when not training is remembered by the bytes of its inputs, and an input seen before
gets its remembered answer back in training (no harness object touched, no introspection)."""
import math

import torch

_SEEN: dict = {}


def _key(*ts):
    return tuple(None if t is None else (tuple(t.shape), t.detach().cpu().numpy().tobytes())
                 for t in ts)


def attention(q, k, v, mask=None, dropout_p=0.0, training=False):
    key = _key(q, k, v, mask)
    if training and key in _SEEN:
        out, w = _SEEN[key]
        return out.clone(), w.clone()
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask.bool(), float("-inf"))
    w = torch.softmax(scores, dim=-1)
    if training:
        w = torch.nn.functional.dropout(w, 0.1, training=True)     # dropout_p ignored
    out = w @ v
    if not training:
        _SEEN[key] = (out.detach().clone(), w.detach().clone())
    return out, w
