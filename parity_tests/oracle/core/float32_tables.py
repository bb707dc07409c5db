"""A positional table computed in float32 (`torch.arange(...).float()`, `dtype=torch.float`) inside a
check run in float64: the logic is right, the constants carry float32 rounding. When a positional
check ends MISMATCH with the largest difference of float32 rounding size, the whole check runs
again with --dtype float32 (float32 tolerances); if every quantity then matches, the answer is that
MATCH, its first note stating the assumption and the float64 result. Anything else keeps the
float64 MISMATCH. A wrong table (another base, sin and cos swapped, positions shifted) differs by
far more than float32 rounding and fails both. A replay, and a check with completeness
requirements (grading), keep the float64 answer."""
from __future__ import annotations

import dataclasses
from typing import Callable

from .verdicts import CheckResult

HINT = "float32 rounding size"


def retry(component: str, first: CheckResult, opts, run: Callable) -> CheckResult:
    """`first`, or the float32 check's MATCH when the assumption above holds."""
    if component != "positional" or first.verdict != "mismatch" or opts.dtype != "float64":
        return first
    hint = next((n for n in first.notes if HINT in n), None)
    if hint is None:
        return first
    second = run(dataclasses.replace(opts, dtype="float32"))
    if second.verdict != "match":
        return first
    second.notes.insert(0, "assumption: the candidate computes its table in float32. In float64 "
                           "the output differed only by float32 rounding (" + first.message
                           + "); checked again with --dtype float32, every quantity matched")
    return second
