"""Comparing what a submission returned with the reference, one example: the first quantity out of
tolerance (dependency order: output, attention weights, input gradients, parameter gradients) gives
the verdict; what comes after it is still measured for the report, never for the verdict.

Runs in the parent only, on validated float64 arrays (backend.Reply); nothing here calls anything
the submission made.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from parity_tests.harness.compare import measure

from ..components import Case, Component
from .modes import WHAT as MODE_WHAT
from .modes import mode_difference
from .verdicts import Outcome, axes_for

FLOAT32_ONLY = ("; code that computes in float32 whatever it is given, as some libraries of their own "
                "do, is checked with --dtype float32")


def rep_got(reply, mode: str, key: str) -> np.ndarray:
    """What the candidate gave for `key` in `mode` (NaN where it gave nothing)."""
    got = reply.modes.get(mode, {}).get(key)
    return got if got is not None else np.full(reply.values[key].shape, np.nan)


def nondeterminism(reply, case: Case, mapping: list) -> Outcome | None:
    """Outputs (and attention weights) of the extra runs - fresh instance, fresh global RNG state -
    must equal the first run's bit for bit."""
    for i, again in enumerate(reply.again, start=2):
        for key in ("output", "attention_weights"):
            a, b = reply.values.get(key), again.get(key)
            if a is None or b is None or a.shape != b.shape or np.array_equal(a, b, equal_nan=True):
                continue
            diff = np.where(np.isnan(a) & np.isnan(b), 0.0, np.abs(a - b))
            diff = np.where(np.isnan(diff), np.inf, diff)
            idx = np.unravel_index(int(np.argmax(diff)), a.shape) if a.size else ()
            return Outcome("nondeterministic", quantity=key,
                           message=(f"two calls on the same input and weights (run 1 and run {i}, "
                                    f"each with a fresh instance and fresh global random states) "
                                    f"gave different {key.replace('_', ' ')} (dropout still "
                                    f"active? random numbers in forward?)"),
                           detail={"index": [int(j) for j in idx], "first": float(a[idx]),
                                   "second": float(b[idx])}, case=case, mapping=mapping)
    return None


class Judge:
    def __init__(self, comp: Component, opts):
        self.comp, self.opts = comp, opts
        self.only: frozenset[str] | None = None   # compare only these groups (groups.py)

    def compare(self, reply, ref_vals: dict, case: Case, mapping: list,
                mode_ref: dict | None = None) -> Outcome:
        """`mode_ref`: {mode: the reference on that mode's own inputs} (core/modes.other_inputs)."""
        comp, opts = self.comp, self.opts
        out = Outcome(case=case, mapping=mapping)
        out.available = [q.key for q in comp.quantities(case) if q.key in reply.values
                         and q.key.split(":", 1)[-1] not in case.absent]
        for q in comp.quantities(case):
            if self.only is not None and q.group not in self.only:
                continue
            name = q.key.split(":", 1)[-1]
            if q.kind == "param_grad" and name in case.absent:
                out.not_checked[q.key] = "the candidate has no such parameter"
                continue
            if q.key not in reply.values:
                out.not_checked[q.key] = reply.missing.get(q.key, "not returned by the candidate")
                continue
            got = reply.values[q.key]
            ref = ref_vals[q.key]
            label = q.label
            if q.key == "attention_weights" and reply.weights_averaged:
                ref = ref.mean(axis=1)
                label += " (averaged over heads, as returned)"
                out.compared_as[q.key] = "as the mean over the heads, as the candidate returns them"
            if q.key == "output" and case.row_keep is not None and got.shape == ref.shape:
                keep = case.row_keep.reshape(case.row_keep.shape + (1,) * (ref.ndim - 2))
                got, ref = np.where(keep, got, 0.0), np.where(keep, ref, 0.0)
            if q.key == "output" and opts.check_dtype and reply.dtypes.get("output") not in (
                    None, opts.dtype):
                return Outcome("wrong_dtype", quantity=q.key,
                               message=f"output has dtype {reply.dtypes['output']}, inputs were "
                                       f"{opts.dtype} (the output must keep the input dtype"
                                       + (FLOAT32_ONLY if reply.dtypes["output"] == "float32" else "") + ")",
                               case=case, mapping=mapping, checked=out.checked)
            if q.key == "output" and opts.check_dtype and opts.dtype == "float32" and not \
                    np.array_equal(got.astype(np.float32).astype(np.float64), got, equal_nan=True):
                return Outcome("wrong_dtype", quantity=q.key,
                               message="output holds values no float32 array can hold (computed in "
                                       "float64?), inputs were float32 (the output must keep the "
                                       "input dtype)", case=case, mapping=mapping,
                               checked=out.checked)
            tol = comp.tolerance(case, q.key, ref, opts.judged_at(), q.kind)   # times conditioning
            rep = measure(label, got, ref, dtype=opts.judged_at(), quantity=q.kind, tol=tol)
            if out.quantity is not None:
                # after the first difference: measured for the report, never the verdict
                out.after[q.key] = "match" if rep.passed else "differs"
                continue
            odd = mode_difference(reply, q.key, q.kind, label, case, opts.judged_at(),
                                  mode_ref, comp) if rep.passed else None
            if rep.passed and odd is None:
                out.checked.append(q.key)
                continue
            if odd is not None:             # right in the main run, not in another mode
                mode, rep = odd
                out.verdict, out.quantity = "mismatch", q.key
                out.detail = self._detail(
                    rep, q.key, rep_got(reply, mode, q.key),
                    ((mode_ref or {}).get(mode) or {}).get(q.key, got),
                    ("'expected' is the reference on this mode's own inputs (other values than the "
                     "main run's, same sizes, masks and weights)" if mode_ref is not None else
                     "'expected' is this candidate's own main run (autograd on, eval(), a fresh "
                     "instance)") + "; 'got' is the " + mode + " run")
                out.detail["mode"] = mode
                out.message = f"{label} {MODE_WHAT[mode]}"
                continue
            verdict = "mismatch"
            if rep.problem.startswith("shape"):
                verdict = "wrong_shape"
            elif rep.problem.startswith("non-finite"):
                verdict = "non_finite"
            out.verdict, out.quantity = verdict, q.key
            out.detail = self._detail(rep, q.key, got, ref, reply.notes.get(q.key))
            out.message = self._headline(verdict, label, out.detail)
            row_note = self._empty_row_note(case, out.detail)
            if row_note:
                out.notes.append(row_note)
        if out.after:
            out.detail["after_first_difference"] = dict(out.after)
        return out

    @staticmethod
    def _empty_row_note(case: Case, d: dict) -> str | None:
        """Say so when the worst element sits in a query row that the mask hides entirely."""
        at = d.get("worst_at", {})
        keep = next((m for m in case.masks.values() if m is not None), None)
        if keep is None or "batch" not in at or "query" not in at:
            return None
        b, qi = at["batch"], at["query"]
        if b < keep.shape[0] and qi < keep.shape[2] and not keep[b, :, qi, :].any():
            return (f"query {qi} of batch {b} may attend to no key at all (a fully masked row): "
                    f"with --strict the reference gives 0 there (safe softmax, as "
                    f"F.scaled_dot_product_attention); a -1e9 fill gives the mean of the values "
                    f"and a -inf fill gives NaN")
        return None

    def _detail(self, rep, key: str, got: np.ndarray, ref: np.ndarray, note: str | None) -> dict:
        d: dict[str, Any] = {"quantity": key, "shape": list(rep.shape),
                             "got_shape": list(np.shape(got))}
        if rep.problem:
            d["problem"] = rep.problem
        if rep.worst_index != () or rep.shape == ():
            idx = [int(i) for i in rep.worst_index]
            d["worst_index"] = idx
            d["worst_at"] = dict(zip(axes_for(self.comp.name, key, len(idx)), idx))
            d["got"] = rep.got_value
            d["expected"] = rep.ref_value
            d["abs_err"] = abs(rep.got_value - rep.ref_value)
            d["rel_err"] = rep.rel_at_worst
        if not rep.problem.startswith("shape"):
            scale = max(1.0, float(np.max(np.abs(ref[np.isfinite(ref)])))) if np.size(ref) else 1.0
            d["tolerance"] = {"atol": rep.tol.atol, "rtol": rep.tol.rtol,
                              "rule": "|got - expected| <= atol * max(1, max|expected|) + rtol * "
                                      "|expected|",
                              "allowed_at_worst": rep.tol.atol * scale + rep.tol.rtol * abs(
                                  rep.ref_value) if np.isfinite(rep.ref_value) else None}
            d["ratio_to_tolerance"] = rep.ratio
            d["elements_over"] = rep.n_over
            d["elements"] = int(np.prod(rep.shape)) if rep.shape else 1
            d["max_abs_err"] = rep.max_abs
        if note:
            d["note"] = note
        return d

    @staticmethod
    def _headline(verdict: str, label: str, d: dict) -> str:
        if verdict == "wrong_shape":
            return f"{label}: wrong shape, got {tuple(d['got_shape'])}, expected {tuple(d['shape'])}"
        if verdict == "non_finite":
            return f"{label}: NaN/inf where the reference is finite ({d.get('problem', '')})"
        return (f"{label} differs from the reference: {d.get('elements_over')} of {d.get('elements')} "
                f"elements over tolerance, worst {d.get('ratio_to_tolerance', 0):.3g} x tolerance")

