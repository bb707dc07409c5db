"""The large-score case of the components holding an attention module (mha, encoder and decoder
layers, the whole model), run after a search that found nothing (parent side): sdpa's is
structural.LARGE_SCORES. The last example run, at batch 2 and lengths 6 (within the user's bounds;
masks drawn again in their kind), marked for components/scores.py, which scales every attention's
query and key projections until its largest |score| is about 3000 and compares at tolerance x the
largest score. A softmax without its row maximum subtracted gives NaN there (`non_finite`), right
code matches. Float64 only (in float32 one rounding of a score of 3000 moves a weight by 2e-4).

    ex = example(comp, last_example, fixed, caps, seed, dtype)   # None where it does not apply
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..components import scores
from .beyond_draws import resized

if TYPE_CHECKING:
    from ..reading.findings import Findings

COMPONENTS = ("mha", "encoder_layer", "decoder_layer", "model")
BATCH, LENGTH = 2, 6        # 2 x 6 x 6 scores a head: some past +709 whatever the signs


def example(comp, base: dict | None, fixed: dict, caps: Findings, seed: int,
            dtype: str) -> dict | None:
    if comp.name not in COMPONENTS or dtype != "float64" or not isinstance(base, dict) \
            or "B" not in base:
        return None
    n = min([LENGTH] + [int(fixed[k]) for k in ("max_len", "max_seq") if k in fixed])
    B = 1 if caps.one_sequence else min(BATCH, int(fixed.get("max_batch", BATCH)))
    ex = resized(comp, base, B, {k: n for k in ("T", "Tq", "S", "Tk")}, caps,
                 np.random.default_rng([int(seed) & 0xFFFFFFFF, 0x1A46E]))
    ex[scores.MARK] = True
    return ex


def note() -> str:
    return (f"a case of large attention scores compared (query and key projections scaled to scores "
            f"of about {scores.TARGET:g}): a softmax that does not subtract the row maximum "
            f"overflows there")
