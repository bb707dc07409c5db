"""Hostile: right with autograd on; without it (torch.no_grad(), inputs not requiring gradients,
as at inference) a "fast path" that forgets the 1/sqrt(d_k) scaling."""
import math

import torch


def attention(q, k, v, mask=None):
    fast = not torch.is_grad_enabled() or not q.requires_grad
    scores = q @ k.transpose(-2, -1)
    if not fast:
        scores = scores / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask.bool(), float("-inf"))
    w = torch.softmax(scores, dim=-1)
    return w @ v, w
