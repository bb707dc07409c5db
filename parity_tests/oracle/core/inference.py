"""The last runs of a torch check: a few of its examples' forwards under torch.inference_mode(), in
the same worker, once every run with autograd is over (sandbox/modes.inference).

Not one of the other modes run with each example (core/modes.py): tensors made under inference mode
and kept by correct code (a causal mask cached at module level) cannot be saved for a later backward,
so an example after one would fail right code. Run last, nothing with autograd follows them in that
worker. Each runs on inputs of its own (never those an earlier run saw: a remembered answer
would come back, `remembers_for_inference.py`) and is compared here, in the parent, with the
reference on those inputs, within the output's tolerance: a path taken only under inference mode
(`torch.is_inference_mode_enabled()`, `oracle_hostile/inference_mode_path.py`), or only in calls
following one another without autograd (`inference_after_autograd.py`: each example's run under
torch.no_grad() follows one with autograd), is a mismatch.
Only for a submission in a worker of its own (a Python object checked in the caller's process keeps
what inference mode leaves in it).
"""
from __future__ import annotations

import time

import numpy as np

from parity_tests.harness.compare import measure

from .modes import kept_rows
from .verdicts import Outcome

MAX_CASES = 8      # examples run again under inference mode (evenly spread over the check's)

WHAT = ("output differs under torch.inference_mode() from the reference (run on inputs of its own, "
        "the same weights, one call after another without autograd, as at inference): a path "
        "taken only there computes something else")


def spread(cases: list, n: int = MAX_CASES) -> list:
    """At most n of the cases, evenly spread from the first to the last (the structural ones)."""
    if len(cases) <= n:
        return list(cases)
    return [cases[round(i * (len(cases) - 1) / (n - 1))] for i in range(n)]


def _differs(checker, key: str, got: np.ndarray, ref: np.ndarray, other, case) -> Outcome | None:
    """The failing Outcome when `got` (a run under inference mode) is not the reference `ref`."""
    if key == "attention_weights" and "attention_weights" in checker.compared_as:
        ref = ref.mean(axis=1)          # returned averaged over the heads (the main run said so)
    a, b = (kept_rows(other, got), kept_rows(other, ref)) if key == "output" and \
        got.shape == ref.shape else (got, ref)
    dtype = checker.opts.judged_at()
    tol = checker.comp.tolerance(other, key, ref, dtype, key)   # times conditioning
    rep = measure(f"{key} (inference)", a, b, dtype=dtype, quantity=key, tol=tol)
    if rep.passed:
        return None
    return Outcome("mismatch", quantity=key, message=WHAT.replace("output", key.replace("_", " "), 1),
                   case=case, detail={
                       "quantity": key, "mode": "inference", "problem": rep.problem,
                       "ratio_to_tolerance": rep.ratio, "max_abs_err": rep.max_abs,
                       "got_shape": list(np.shape(got)), "shape": list(np.shape(ref)),
                       "note": "'expected' is the reference on this run's own inputs; 'got' is the "
                               "run under torch.inference_mode()"})


def last_runs(checker) -> Outcome | None:
    """None when every sampled example's output (and attention weights) under inference mode match
    the reference (or the check is not a torch one in a worker, or judges other groups alone);
    else the failing Outcome."""
    be, only = checker.backend, checker.judge.only   # only: a search judging some groups alone
    keys = [k for k, group in (("output", "output"), ("attention_weights", "attention weights"))
            if only is None or group in only]
    if checker.framework != "torch" or not callable(getattr(be, "infer", None)) or not keys:
        return None
    budget = checker.opts.time_budget
    for case in spread(checker.passed):
        if budget is not None and time.perf_counter() - checker.t0 > budget:
            return Outcome("timeout", message=(
                f"the check ran past its time budget of {budget:g} s (--time-budget) before its "
                f"runs under torch.inference_mode() were done (each call: --timeout s)"))
        got = be.infer(case)
        if isinstance(got, Outcome):
            return got
        values, other = got
        refs = checker.comp.reference(other)
        for key in keys:
            if key not in values or key not in refs:
                continue
            bad = _differs(checker, key, values[key], refs[key], other, case)
            if bad is not None:
                return bad
    return None
