"""Right forward, wrong backward (the gradient of q is doubled), and the worker is made to report
every gradient as missing, so that none would be compared."""
from unguard import unguard  # the worker's own harness checks off first (see unguard.py)

unguard()
import math
import sys

import torch

_exec = sys.modules["parity_tests.oracle.reading.execute"].ExecuteMixin
_execute = _exec.execute


def _claim(self, inst, case, **kw):
    produced = _execute(self, inst, case, **kw)
    for k in [k for k in produced.values if k.startswith("grad_")]:
        del produced.values[k]
        produced.missing[k] = "not returned by the candidate"
    return produced


_exec.execute = _claim


class _Wrong(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q):
        return q.clone()

    @staticmethod
    def backward(ctx, g):
        return 2 * g


def attention(query, key, value, mask=None):
    query = _Wrong.apply(query)
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = scores.softmax(dim=-1)
    return weights @ value, weights
