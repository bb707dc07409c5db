"""Attention scores far past exp's float64 range, in every component that holds an attention
module (mha, encoder and decoder layers, the whole model), as `sdpa` has with
core/structural.LARGE_SCORES.

A softmax that does not subtract its row maximum (`e = exp(s); e / e.sum(-1)`) overflows once a
score passes ~709 (inf / inf = NaN) and underflows once a whole row is below ~-745 (0 / 0): the
commonest softmax bug, invisible on drawn weights (scores of size 1). An example marked with MARK
(core/large_scores.example) has the query and key projections (weight and bias) of every
attention scaled so that its largest |score| is about TARGET: the scale is measured on the
reference itself, attention by attention, and set again ROUNDS times (an attention's input depends
on the ones before it). Scaling the projections, not the inputs, reaches the scores through any
LayerNorm placed before the attention (pre-norm) and leaves the values and every other path of size
1. The reference subtracts the row maximum and stays finite; such code ends `non_finite`.

Right code rounds its scores otherwise (another summation order, q scaled before the product):
a score of size S rounded by u * S changes the weights by that much relative, so every quantity of
such a case is compared at tolerance x the largest |score| (`conditioning`), as sdpa's large-score
case is; a bug's difference (a scale, a mask, an axis) is of size 1, far above it.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from npformer.layers.attention import MultiHeadAttention

MARK = "large_scores"
TARGET = 3000.0      # the largest |score| of each attention; exp overflows past ~709
ROUNDS = 3


def maxima(comp, case) -> dict[str, float]:
    """{attention module's dotted name: its largest |score| on `case`} in the reference."""
    module, _ = comp.forward_module(case)
    out = {}
    for name, mod in module.named_modules():
        cache = getattr(mod, "_cache", None) if isinstance(mod, MultiHeadAttention) else None
        if cache is not None:
            q, k, _, scale = cache.weights
            out[name] = float(np.abs(q @ np.swapaxes(k, -1, -2) * scale).max(initial=0.0))
    return out


def tuned(comp, case):
    """`case` with the query and key projections of every attention scaled to scores of TARGET."""
    params = dict(case.params)
    for _ in range(ROUNDS):
        for name, top in maxima(comp, dataclasses.replace(case, params=params)).items():
            factor = np.sqrt(TARGET / max(top, 1e-6))
            for proj in ("q_proj", "k_proj"):
                for leaf in ("weight", "bias"):
                    key = ".".join(filter(None, (name, proj, leaf)))
                    if key in params:
                        params[key] = params[key] * factor
    return dataclasses.replace(case, params=params)


def conditioning(comp, case) -> float:
    """The largest |score| of any attention on `case` (its own inputs and weights), >= 1."""
    return max(1.0, *maxima(comp, case).values())
