"""Hostile: without autograd, right only when the call before had autograd on (the order of the
oracle's runs of one example: with autograd, then once under torch.no_grad()); in a loop of calls
at inference every call after the first forgets the 1/sqrt(d_k) scaling."""
import math

import torch

_LAST = {"grad": True}


def attention(q, k, v, mask=None):
    grad = torch.is_grad_enabled()
    right = grad or _LAST["grad"]
    _LAST["grad"] = grad
    scores = q @ k.transpose(-2, -1)
    if right:
        scores = scores / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask.bool(), float("-inf"))
    w = torch.softmax(scores, dim=-1)
    return w @ v, w
