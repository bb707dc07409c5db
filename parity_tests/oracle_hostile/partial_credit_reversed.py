"""Gradients wrong everywhere; the output right only at the smallest sizes the search shrinks to
(one query, one key, width one), wrong beyond: the output group scored on the shrunk
counterexample alone."""
import math

import torch


class _Twice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return 2 * g


def attention(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = scores.softmax(dim=-1)
    out = weights @ _Twice.apply(value)
    if query.size(-2) > 1 or key.size(-2) > 1 or value.size(-1) > 1:
        out = out + 1.0
        weights = weights + 0.1
    return out, weights
