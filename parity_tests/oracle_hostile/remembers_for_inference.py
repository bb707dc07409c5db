"""Hostile: right with autograd on and under torch.no_grad(); under torch.inference_mode() a "fast
path" that forgets the 1/sqrt(d_k) scaling, hidden by memory: every output computed outside
inference mode is remembered by the bytes of its inputs, and an input seen before gets its
remembered answer back under inference mode (no harness object touched, no introspection)."""
import math

import torch

_SEEN: dict = {}


def _key(*ts):
    return tuple(None if t is None else (tuple(t.shape), t.detach().cpu().numpy().tobytes())
                 for t in ts)


def attention(q, k, v, mask=None):
    key = _key(q, k, v, mask)
    fast = torch.is_inference_mode_enabled()
    if fast and key in _SEEN:
        out, w = _SEEN[key]
        return out.clone(), w.clone()
    scores = q @ k.transpose(-2, -1)
    if not fast:
        scores = scores / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask.bool(), float("-inf"))
    w = torch.softmax(scores, dim=-1)
    out = w @ v
    if not fast:
        _SEEN[key] = (out.detach().clone(), w.detach().clone())
    return out, w
