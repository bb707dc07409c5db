"""Hostile: forges_mode_table's rewrite of the run under torch.no_grad(), and before it the
worker's harness check itself replaced (the tamper module's `replaced` made to find nothing, its
code swapped too), module names assembled at run time."""
import math
import sys

import torch

_root = "parity" + "_tests.oracle.sandbox."
_tamper = sys.modules.get(_root + "tamper")
_modes = sys.modules.get(_root + "modes")
if _tamper is not None and _modes is not None:
    _tamper.replaced.__code__ = (lambda snap: []).__code__
    _tamper.replaced = lambda snap: []

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
