"""A positional table computed in float32 (`torch.arange(...).float()`, `dtype=torch.float`) inside a
check run in float64: the logic is right, the constants carry float32 rounding. Attention code can
do the same: Hugging Face's eager attention takes its softmax in float32 and casts back
(`softmax(scores, dim=-1, dtype=torch.float32).to(query.dtype)`). When such a check (positional,
sdpa, mha, encoder or decoder layer) ends MISMATCH with the largest difference of float32 rounding
size, the whole check runs again with --dtype float32 (float32 tolerances); if every quantity then
matches, the answer is that MATCH, its first note stating the assumption and the float64 result.
Anything else keeps the float64 MISMATCH. A wrong table (another base, sin and cos swapped,
positions shifted) or a wrong attention (another scale, a missing mask) differs by far more than
float32 rounding and fails both. A replay, and a check with completeness requirements (grading),
keep the float64 answer."""
from __future__ import annotations

import dataclasses
from typing import Callable

from .verdicts import CheckResult

HINT = "float32 rounding size"
ASSUMED = {"positional": "the candidate computes its table in float32",
           **{c: "the candidate computes part of its attention in float32 (a softmax taken in float32, "
                 "as Hugging Face's eager attention does)" for c in ("sdpa", "mha", "encoder_layer", "decoder_layer")}}


def retry(component: str, first: CheckResult, opts, run: Callable) -> CheckResult:
    """`first`, or the float32 check's MATCH when the assumption above holds."""
    if component not in ASSUMED or first.verdict != "mismatch" or opts.dtype != "float64":
        return first
    if not first.float32_sized:     # the parent's finding, never a note's text
        return first
    second = run(dataclasses.replace(opts, dtype="float32"))
    if second.verdict != "match":
        return first
    second.notes.insert(0, f"assumption: {ASSUMED[component]}. In float64 the output differed only by "
                           "float32 rounding (" + first.message + "); checked again with --dtype float32, "
                           "every quantity matched")
    return second
