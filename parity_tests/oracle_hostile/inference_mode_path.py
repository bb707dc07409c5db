"""Hostile: right with autograd on and under torch.no_grad(); only under torch.inference_mode()
(where serving code runs it) a "fast path" that forgets the 1/sqrt(d_k) scaling."""
import math

import torch


def attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1)
    if not torch.is_inference_mode_enabled():
        scores = scores / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask.bool(), float("-inf"))
    w = torch.softmax(scores, dim=-1)
    return w @ v, w
