"""The two primitives of a gradient check, central differences and the relative error, and its report.

See npformer.checks.gradcheck for how they check a module or a functional pair.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, NamedTuple, Sequence

import numpy as np

__all__ = ["numerical_gradient", "rel_error", "TensorCheck", "GradcheckReport"]


# --------------------------------------------------------------------------------------------------
# the two primitives
# --------------------------------------------------------------------------------------------------
def numerical_gradient(f: Callable[[], float], x: np.ndarray, eps: float = 1e-5,
                       indices: Sequence[int] | np.ndarray | None = None) -> np.ndarray:
    """Central differences of the scalar `f()` with respect to the array `x`, perturbed in place.

    `f` takes no arguments: it must read `x` (the very array given here). Every entry is restored
    bit-for-bit afterwards, also when `f` raises. With `indices` (flat indices into x) only those
    entries are estimated and a 1-D array aligned with `indices` comes back; otherwise an array of
    x's shape.
    """
    flat_ids = _check_numerical_arguments(f, x, eps, indices)
    out = np.empty(flat_ids.shape, dtype=np.float64)          # (n,)
    for k, i in enumerate(flat_ids):
        idx = np.unravel_index(int(i), x.shape)               # works for any memory layout
        old = x[idx].copy()                                   # the exact original value
        try:
            x[idx] = old + eps
            f_plus = _scalar(f())
            x[idx] = old - eps
            f_minus = _scalar(f())
        finally:
            x[idx] = old                                      # restore exactly
        out[k] = (f_plus - f_minus) / (2.0 * eps)
    return out.reshape(x.shape) if indices is None else out


def _check_numerical_arguments(f, x, eps, indices) -> np.ndarray:
    """The flat indices to estimate, once f, x, eps and indices are checked (each named)."""
    if not callable(f):
        raise TypeError(f"f: expected a callable taking no arguments that reads x, got "
                        f"{type(f).__name__}")
    if not isinstance(x, np.ndarray):
        raise TypeError(f"x: expected the numpy array f reads (perturbed in place), got "
                        f"{type(x).__name__}")
    if x.dtype.kind != "f":
        raise TypeError(f"x: expected a float array (float64 for a gradient check), got dtype "
                        f"{x.dtype}: its entries cannot move by eps")
    if not x.flags.writeable:
        raise ValueError("x: expected a writeable array (its entries are perturbed in place), got a "
                         "read-only one")
    if isinstance(eps, bool) or not isinstance(eps, (int, float, np.integer, np.floating)) \
            or not np.isfinite(eps) or eps <= 0:
        raise ValueError(f"eps: expected a finite float > 0, got {eps!r}")
    if indices is None:
        return np.arange(x.size)
    flat = np.asarray(indices)
    if flat.ndim != 1 or (flat.size and flat.dtype.kind not in "iu"):
        raise ValueError(f"indices: expected a 1-D sequence of flat integer indices into x, got "
                         f"{np.asarray(indices).dtype} of shape {flat.shape}")
    if flat.size and (flat.min() < 0 or flat.max() >= x.size):
        raise ValueError(f"indices: expected flat indices in [0, {x.size}) (x.size), got "
                         f"{int(flat.min()) if flat.min() < 0 else int(flat.max())}")
    return flat.astype(np.intp)


def _scalar(value) -> float:
    """f()'s value as a float: a number or an array of one element, else a named error."""
    if np.size(value) != 1:
        raise ValueError(f"f: expected a scalar (the loss), got a value of shape {np.shape(value)}")
    return float(np.asarray(value).reshape(()))


def rel_error(a: np.ndarray, n: np.ndarray, floor: float = 0.0) -> float:
    """max|a - n| / max(max|a|, max|n|, floor); 0.0 when both are exactly zero (or empty)."""
    a = np.asarray(a, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    if a.shape != n.shape:
        raise ValueError(f"rel_error: expected a and n of the same shape, got {a.shape} and "
                         f"{n.shape}")
    if a.size == 0:
        return 0.0
    num = float(np.max(np.abs(a - n)))
    den = max(float(np.max(np.abs(a))), float(np.max(np.abs(n))), float(floor))
    if num == 0.0:
        return 0.0
    return num / den if den > 0.0 else float("inf")


# --------------------------------------------------------------------------------------------------
# the report
# --------------------------------------------------------------------------------------------------
class TensorCheck(NamedTuple):
    """The outcome for one tensor (an input or a parameter)."""
    shape: tuple[int, ...]
    checked: int                 # entries finite-differenced (all, or a random subset)
    rel_error: float             # the per-tensor error defined in the module docstring
    abs_error: float             # max|a - n| over the checked entries
    worst_index: tuple[int, ...]  # where |a - n| is largest
    analytic: float              # a at worst_index
    numeric: float               # n at worst_index


@dataclass
class GradcheckReport:
    """Per-tensor errors of one gradient check.

    errors   {name: relative error}; inputs are named "input:<argument name>", parameters by their
             dotted name (as in state_dict)
    details  {name: TensorCheck}
    skipped  {name: why it was not checked}
    problems anything else that makes the check fail (for instance a forward that is not
             deterministic once the dropout masks are fixed)
    """
    tol: float
    errors: dict[str, float] = field(default_factory=dict)
    details: dict[str, TensorCheck] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def max_error(self) -> float:
        return max(self.errors.values(), default=0.0)

    @property
    def passed(self) -> bool:
        # written so that a NaN error fails (NaN <= tol is False)
        return not self.problems and all(e <= self.tol for e in self.errors.values())

    def failures(self) -> dict[str, float]:
        return {k: e for k, e in self.errors.items() if not e <= self.tol}

    def __str__(self) -> str:
        verdict = "PASSED" if self.passed else "FAILED"
        lines = [f"gradcheck {verdict}: max relative error {self.max_error:.3e} (tol {self.tol:.1e}), "
                 f"{len(self.errors)} tensors, {sum(d.checked for d in self.details.values())} "
                 f"entries"]
        width = max([len(n) for n in list(self.errors) + list(self.skipped)] + [6])
        lines.append(f"  {'tensor':<{width}}  {'rel err':>9}  {'abs err':>9}  {'checked':>7}  "
                     f"{'analytic':>12}  {'numeric':>12}  worst index")
        for name, d in self.details.items():
            flag = "" if d.rel_error <= self.tol else "  <-- FAIL"
            lines.append(f"  {name:<{width}}  {d.rel_error:9.2e}  {d.abs_error:9.2e}  "
                         f"{d.checked:7d}  {d.analytic:12.5e}  {d.numeric:12.5e}  "
                         f"{d.worst_index}{flag}")
        for name, why in self.skipped.items():
            lines.append(f"  {name:<{width}}  skipped: {why}")
        for p in self.problems:
            lines.append(f"  problem: {p}")
        return "\n".join(lines)

    def raise_if_failed(self) -> "GradcheckReport":
        if not self.passed:
            raise AssertionError(str(self))
        return self
