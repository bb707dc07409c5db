"""Hostile: the same forgery as forges_mode_table, the oracle's module named in plain text in the
source (no import statement): the worker's table of extra runs rewritten so the run under
torch.no_grad() takes the path with autograd on."""
import math
import sys

import torch

_modes = sys.modules.get("parity_tests.oracle.sandbox.modes")
if _modes is not None:
    _modes.RUNS["nograd"] = lambda ad, case, tick=None: _modes._forward_only(
        ad, ad.instantiate(case), case)


def attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1)
    if torch.is_grad_enabled():
        scores = scores / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask.bool(), float("-inf"))
    w = torch.softmax(scores, dim=-1)
    return w @ v, w
