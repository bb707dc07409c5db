"""Hostile: right with autograd on, a "fast path" without it that forgets the 1/sqrt(d_k); and, at
import, the worker's own table of extra runs rewritten (its module reached through sys.modules,
the name assembled at run time so no source scan sees it): the run under torch.no_grad() is
replaced by one with autograd on, which takes the right path."""
import math
import sys

import torch

_modes = sys.modules.get("parity" + "_tests.oracle.sandbox.modes")
if _modes is not None:
    def _with_grad(ad, case, tick=lambda: None):
        return _modes._forward_only(ad, ad.instantiate(case), case)
    _modes.RUNS["nograd"] = _with_grad


def attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1)
    if torch.is_grad_enabled():
        scores = scores / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask.bool(), float("-inf"))
    w = torch.softmax(scores, dim=-1)
    return w @ v, w
