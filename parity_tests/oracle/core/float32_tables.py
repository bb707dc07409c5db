"""A positional table computed in float32 (`torch.arange(...).float()`, `dtype=torch.float`) inside a
check run in float64: the logic is right, the constants carry float32 rounding (a whole model
holding such a table too). Attention code can do the same: Hugging Face's eager attention takes its
softmax in float32 and casts back (`softmax(scores, dim=-1, dtype=torch.float32).to(query.dtype)`).
When such a check (positional, sdpa, mha, encoder or decoder layer, model) ends MISMATCH with the
largest difference of float32 rounding size, the whole check runs again with --dtype float32
(float32 tolerances); if every quantity then matches, the answer is that MATCH, its first note
stating the assumption and the float64 result. Anything else is a MISMATCH (with the float32
counterexample when that check failed, below). A wrong table (another base, sin and cos swapped,
positions shifted) or a wrong attention (another scale, a missing mask) differs by far more than
float32 rounding and fails both. A replay, and a check with completeness requirements (grading),
keep the float64 answer.

Float32 rounding is relative: it stays float32-sized whatever the inputs' scale. A LayerNorm's
epsilon is not: a wrong one (1e-12 or 9e-6 where 1e-5 is wanted, whatever the candidate's `eps`
attribute says) changes the output by about (its difference) / (2 x the row's variance), float32-
sized on rows of large spread, large on rows of small spread. So for a component whose reference
has an epsilon, the float64 counterexample is replayed first with its inputs and weights scaled by
SMALL (its output compared); the float32 re-check is tried only if the difference there, relative
to the output's scale, is not GROWTH times larger (an epsilon's grows by about 1 / SMALL**2,
rounding's stays about its size).

When the float32 re-check fails on a value, its counterexample is the one reported: the float64
one showed only rounding (one head, where a scale bug cannot show), the float32 one shows the
failure. When it ends any other way (float64 returned for float32 inputs: NumPy 2 promotes
`x / np.sqrt(d_k)` to float64; an error), the code is not float32 code and the float64 MISMATCH
stands, so the verdict does not depend on which example the search met first.

A float32 MATCH is taken only if the float64 code is off by float32 rounding on every example, not
only on the shrunk one (Hypothesis shrinks to the simplest failure: no mask, one position, where
code that ignores its mask in float64 alone differs by whatever else it adds): the float64 search
runs once more judged at float32 tolerances (Options.tolerance_dtype). If that fails, its
counterexample is reported (a float64 failure by any measure); any other end keeps the float64
MISMATCH."""
from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from .verdicts import CheckResult

HINT = "float32 rounding size"
ASSUMED = {"positional": "the candidate computes its table in float32",
           **{c: "the candidate computes part of its attention in float32 (a softmax taken in float32, "
                 "as Hugging Face's eager attention does)" for c in ("sdpa", "mha", "encoder_layer", "decoder_layer")},
           "model": "the candidate computes part of the model in float32 (its positional table, as the "
                    "PyTorch tutorial's float32 buffer, or a softmax taken in float32)"}


FAILED = ("mismatch", "non_finite", "wrong_shape")   # a failure with a counterexample to show
SMALL = 1e-2      # inputs scaled by this: a row variance 1e-4 of the drawn one
GROWTH = 100.0    # rounding stays about its size (relative); an epsilon's error grows ~1/SMALL**2


def scaled_case(case, factor: float, dtype: str):
    """The case with its float inputs and every parameter (never ids or masks) multiplied by
    `factor`, rounded to the check's dtype: biases and a norm's gain and shift scaled too, every
    norm's input is of the order of `factor` (scaling the inputs alone leaves a post-norm layer's
    norms fed by the projections' biases)."""
    if factor == 1.0:
        return case

    def small(d: dict) -> dict:
        return {k: (v * factor).astype(dtype).astype(np.float64)
                if isinstance(v, np.ndarray) and v.dtype.kind == "f" else v for k, v in d.items()}
    return dataclasses.replace(case, inputs=small(case.inputs), params=small(case.params))


def _grows(first: CheckResult, small: CheckResult) -> float:
    """How much larger the difference is, relative to the output's scale, at the small scale
    (the output scales with SMALL: every input and parameter did); inf when it cannot be read."""
    a = (first.detail or {}).get("max_abs_err")
    b = (small.detail or {}).get("max_abs_err")
    if small.verdict != "mismatch" or small.quantity != "output" or not a or b is None:
        return float("inf")
    return float(b) / SMALL / float(a)


def retry(component: str, first: CheckResult, opts, run: Callable,
          has_eps: bool = False) -> CheckResult:
    """`first`, or the float32 check's MATCH when the assumption above holds. `run(opts,
    replay=..., scale=...)` runs a check; has_eps: the component's reference has an epsilon."""
    if component not in ASSUMED or first.verdict != "mismatch" or opts.dtype != "float64":
        return first
    if not first.float32_sized:     # the parent's finding, never a note's text
        return first
    if has_eps and first.example is not None:
        small = run(opts, replay=first.example, only=frozenset({"output"}), scale=SMALL)
        if small.verdict != "match" and _grows(first, small) > GROWTH:
            first.notes.append(f"not float32 rounding: the same example with its inputs and "
                               f"weights scaled by {SMALL:g} (rows of small spread, where a LayerNorm's epsilon "
                               f"counts) gave {small.verdict}: {small.message}")
            return first
    second = run(dataclasses.replace(opts, dtype="float32"))
    if second.verdict != "match":
        if second.verdict == "mismatch" and second.example is not None:
            second.notes.insert(0, "the float64 check differed only by float32 rounding ("
                                + first.message + "); checked again with --dtype float32, "
                                "which failed on the example shown")
            return second
        # any other end (float64 returned for float32 inputs, an error) says nothing about the
        # float64 difference: the check asked for stands, with the re-check's end as a note
        first.notes.append(f"checked again with --dtype float32 (is it float32 code?): "
                           f"{second.verdict}: {second.message}")
        return first
    # the float32 code's float64 run must itself be off by no more than float32 rounding, on every
    # example (the shrunk one may be the only one that is): code wrong in float64 alone (a mask
    # ignored when x.dtype is float64) fails this search
    third = run(dataclasses.replace(opts, tolerance_dtype="float32"))
    if third.verdict != "match":
        if third.verdict in FAILED and third.example is not None:
            third.notes.insert(0, "the float64 check's shrunk example differed only by float32 rounding ("
                               + first.message + ") and --dtype float32 matched, but the float64 run "
                               "judged at float32 tolerances failed on the example shown: the code is "
                               "wrong in float64, not float32 code")
            return third
        first.notes.append(f"checked again in float64 at float32 tolerances (is every float64 "
                           f"difference float32 rounding?): {third.verdict}: {third.message}")
        return first
    second.notes.insert(0, f"assumption: {ASSUMED[component]}. In float64 the output differed only by "
                           "float32 rounding (" + first.message + "); checked again with --dtype float32, "
                           "every quantity matched, and in float64 at float32 tolerances, every "
                           "quantity matched")
    return second
