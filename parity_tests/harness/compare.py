"""compare(name, got, ref, dtype, quantity): one tensor against its reference, by name.

On a mismatch it raises `ParityError` (an AssertionError) whose first line names the tensor and whose
body gives the worst element (index, both values, abs and rel error, ratio to the tolerance), how many
elements are over, the drawn case, and how to reproduce it. `measure` does the same arithmetic without
raising (used to measure floors and by reports).

Inputs may be numpy arrays, Python/NumPy scalars or torch tensors (converted without importing torch).
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

import numpy as np

from .case import current_case, reproduce_hint, summarize
from .tolerances import Tolerance, dtype_name, tolerance

MEASURE_ENV = "NPFORMER_PARITY_MEASURE"
"""When set to a file path, every comparison appends its error to that JSON-lines file and never
raises: the measurement mode of parity_tests/measure_floors.py (never set it in CI)."""


def _record_measurement(rep: "Report") -> None:
    path = os.environ.get(MEASURE_ENV)
    if not path or rep.problem:
        return
    node = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]
    # a tolerance scaled by a condition number (tolerances.scaled) divides the error by it, so the
    # floor is measured in the units of the shared table
    try:
        factor = max(1.0, rep.tol.atol / tolerance(rep.dtype, rep.quantity).atol)
    except KeyError:
        factor = 1.0
    row = dict(test=node, name=rep.name, quantity=rep.quantity, dtype=rep.dtype,
               err=rep.max_err_over_scale / factor, raw_err=rep.max_err_over_scale,
               condition=factor, ratio=rep.ratio,
               case=", ".join(f"{k}={summarize(v, 8)}" for k, v in rep.case.items())[:400])
    with open(path, "a") as f:
        f.write(json.dumps(row) + "\n")


class ParityError(AssertionError):
    """A tensor differs from its reference beyond tolerance (message names the tensor)."""

    def __init__(self, message: str, report: "Report | None" = None, others: tuple = ()):
        super().__init__(message)
        self.report = report
        self.others = others  # further failing Reports when several were checked at once


def as_array(x: Any) -> np.ndarray:
    """numpy array from an array, a scalar or a torch tensor (detached, on CPU)."""
    if hasattr(x, "detach") and hasattr(x, "cpu"):  # torch.Tensor
        x = x.detach().cpu()
        if str(x.dtype) in ("torch.bfloat16", "torch.float16"):
            x = x.float()
        return x.numpy()
    return np.asarray(x)


def _lower_precision(a: np.ndarray, b: np.ndarray) -> str:
    names = [dtype_name(x.dtype) for x in (a, b) if np.issubdtype(x.dtype, np.floating)]
    if "float32" in names:
        return "float32"
    return "float64"


@dataclass
class Report:
    """Outcome of one comparison (all errors in float64 arithmetic)."""

    name: str
    quantity: str
    dtype: str
    shape: tuple
    tol: Tolerance
    passed: bool
    max_abs: float = 0.0          # largest |got - ref| over the tensor
    max_err_over_scale: float = 0.0  # largest |got - ref| / max(1, max|ref|): what floors measure
    ratio: float = 0.0            # worst |got - ref| / allowed (<= 1 passes)
    worst_index: tuple = ()
    got_value: float = float("nan")
    ref_value: float = float("nan")
    n_over: int = 0
    problem: str = ""             # shape / NaN / dtype problems, when not a numeric mismatch
    case: dict = field(default_factory=dict)

    @property
    def rel_at_worst(self) -> float:
        err = abs(self.got_value - self.ref_value)
        return err / abs(self.ref_value) if self.ref_value != 0 else (0.0 if err == 0 else float("inf"))

    def message(self) -> str:
        head = (f"parity mismatch: {self.name} ({self.quantity}, {self.dtype}, "
                f"shape {self.shape})")
        lines = [head]
        if self.problem:
            lines.append(f"  {self.problem}")
        if self.worst_index != () or (self.shape == () and not self.problem):
            idx = tuple(int(i) for i in self.worst_index)
            lines.append(f"  worst index {idx}: got {self.got_value!r}, ref {self.ref_value!r}")
        if not self.problem:
            lines.append(f"  abs err {abs(self.got_value - self.ref_value):.3e}, rel err "
                         f"{self.rel_at_worst:.3e}, {self.ratio:.3g} x tolerance "
                         f"({self.tol.describe()})")
            total = int(np.prod(self.shape)) if self.shape else 1
            lines.append(f"  elements over tolerance: {self.n_over} of {total}; "
                         f"max abs err over the tensor {self.max_abs:.3e}")
        if self.case:
            lines.append("  case: " + ", ".join(f"{k}={summarize(v)}" for k, v in self.case.items()))
        lines.append("  " + reproduce_hint())
        return "\n".join(lines)


def measure(name: str, got: Any, ref: Any, dtype=None, quantity: str = "output", *,
            tol: Tolerance | None = None, check_dtype: bool = False,
            case: Mapping | None = None) -> Report:
    """Compare without raising; returns the Report (`.passed`)."""
    g, r = as_array(got), as_array(ref)
    dt = dtype_name(dtype) if dtype is not None else _lower_precision(g, r)
    tol = tol or tolerance(dt, quantity)
    info = dict(current_case())
    if case:
        info.update(case)
    rep = Report(name=name, quantity=quantity, dtype=dt, shape=tuple(r.shape), tol=tol,
                 passed=False, case=info)
    if g.shape != r.shape:
        rep.problem = f"shape: got {tuple(g.shape)}, ref {tuple(r.shape)}"
        return rep
    if check_dtype and dtype is not None and g.dtype != np.dtype(dt):
        rep.problem = f"dtype: got {g.dtype}, expected {dt} (no silent up/down-casting)"
        return rep
    g64 = g.astype(np.float64)
    r64 = r.astype(np.float64)
    if g64.size == 0:
        rep.passed = True
        return rep
    finite_g, finite_r = np.isfinite(g64), np.isfinite(r64)
    if not finite_r.all() or not finite_g.all():
        same_special = (~finite_g) & (~finite_r) & ((g64 == r64) | (np.isnan(g64) & np.isnan(r64)))
        bad = (~finite_g | ~finite_r) & ~same_special
        if bad.any():
            idx = np.unravel_index(int(np.argmax(bad)), g64.shape)
            rep.worst_index, rep.got_value, rep.ref_value = idx, float(g64[idx]), float(r64[idx])
            rep.n_over = int(bad.sum())
            # no finite multiple of the tolerance covers a NaN or inf where the other side has a
            # number: the ratio is inf, the largest error NaN or inf (never the defaults' 0)
            rep.ratio = math.inf
            rep.max_abs = rep.max_err_over_scale = float(np.abs(g64[bad] - r64[bad]).max())
            where = "reference" if not np.isfinite(r64[idx]) else "result"
            rep.problem = (f"non-finite values: {int((~finite_g).sum())} in result, "
                           f"{int((~finite_r).sum())} in reference; first mismatch in the {where} "
                           f"at {tuple(int(i) for i in idx)}: got {float(g64[idx])!r}, "
                           f"ref {float(r64[idx])!r}")
            return rep
        g64 = np.where(same_special, 0.0, g64)
        r64 = np.where(same_special, 0.0, r64)
    err = np.abs(g64 - r64)
    allowed = tol.bound(r64)
    ratio = err / allowed
    worst = np.unravel_index(int(np.argmax(ratio)), ratio.shape) if ratio.ndim else ()
    rep.max_abs = float(err.max())
    rep.max_err_over_scale = float(err.max() / max(1.0, float(np.abs(r64).max())))
    rep.ratio = float(ratio[worst])
    rep.worst_index = worst
    rep.got_value, rep.ref_value = float(g64[worst]), float(r64[worst])
    rep.n_over = int((ratio > 1).sum())
    rep.passed = rep.n_over == 0
    if os.environ.get(MEASURE_ENV):
        _record_measurement(rep)
        rep.passed = True
    return rep


def compare(name: str, got: Any, ref: Any, dtype=None, quantity: str = "output", *,
            tol: Tolerance | None = None, check_dtype: bool = False,
            case: Mapping | None = None) -> Report:
    """Assert `got` matches `ref` within the tolerance for (dtype, quantity); raise ParityError.

    dtype: the precision the computation ran in (default: the lower precision of got and ref).
    quantity: one of tolerances.QUANTITIES. tol: an explicit Tolerance (overrides the table).
    check_dtype: also require got.dtype == dtype (e.g. float32 stays float32).
    case: extra fields describing the drawn example, merged with `note_case`'s.
    """
    rep = measure(name, got, ref, dtype, quantity, tol=tol, check_dtype=check_dtype, case=case)
    if not rep.passed:
        raise ParityError(rep.message(), rep)
    return rep


def compare_all(items: Iterable[tuple], *, dtype=None, case: Mapping | None = None,
                check_dtype: bool = False) -> list[Report]:
    """Compare many (name, got, ref, quantity) or (name, got, ref, quantity, tol) tuples in the
    given (dependency) order; a tol of None means the table's.

    Everything is measured; when something fails, the ParityError names the FIRST failing tensor in
    the given order (the earliest point where the twins diverge) and lists the others after it.
    """
    reports = [measure(it[0], it[1], it[2], dtype, it[3], check_dtype=check_dtype, case=case,
                       tol=it[4] if len(it) > 4 else None)
               for it in items]
    failed = [r for r in reports if not r.passed]
    if failed:
        msg = failed[0].message()
        if len(failed) > 1:
            rest = ", ".join(f"{r.name} ({r.ratio:.2g}x)" if not r.problem else f"{r.name} ({r.problem})"
                             for r in failed[1:9])
            more = f" and {len(failed) - 9} more" if len(failed) > 9 else ""
            msg += f"\n  also failing ({len(failed) - 1}): {rest}{more}"
        raise ParityError(msg, failed[0], tuple(failed[1:]))
    return reports
