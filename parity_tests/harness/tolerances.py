"""Every parity tolerance of the project, in one table: per dtype and per quantity.

An element passes when

    |got - ref| <= atol * scale + rtol * |ref|,     scale = max(1, max |ref| over the tensor)

`atol` is measured in units of the tensor's own magnitude once that exceeds 1: rounding errors of a
sum or a matrix product grow with the size of its terms, not with the size of one result element, so
an element that cancels to ~0 inside a tensor of gradients of size 30 carries an error ~30x that of a
tensor of size 1. For tensors of magnitude <= 1 (outputs of LayerNorm-ed layers, attention weights,
most gradients in the suite) this is exactly `atol + rtol * |ref|`.

Floors were measured on this machine (2-core x86-64 CPU shared with other jobs, numpy 2.4 +
OpenBLAS, torch 2.13 CPU, TF32 off, explicit attention path) by `python -m parity_tests.measure_floors`
over the suite's own strategies, thorough profile with 120 examples per test: 76,781 comparisons
(npformer vs torchformer for every component and model, npformer vs torch / torch.nn functions and
modules, optimizer and training runs). FLOORS holds the largest err / max(1, max|ref|) seen per
dtype and quantity (LayerNorm's own tests divided by their condition number, see conditioning.py);
the typical (p99) values are 10-100x smaller. Tolerance = floor x SAFETY, rounded up to 1, 2 or 5
times a power of ten; rtol equals atol.

Never loosen an entry to make a test pass without writing the reason next to it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

QUANTITIES = ("output", "attention_weights", "input_grad", "param_grad", "loss", "optimizer_state")
"""What is compared. `output`: any forward value (module outputs, logits, masks as floats);
`attention_weights`: per-head softmax probabilities; `input_grad`: gradient of an input (including
the embeddings' output, encoder_input/decoder_input); `param_grad`: a parameter's `.grad`; `loss`: a
scalar loss; `optimizer_state`: parameters and moments after optimizer steps."""


@dataclass(frozen=True)
class Tolerance:
    """|got - ref| <= atol * max(1, max|ref|) + rtol * |ref|, elementwise."""

    atol: float
    rtol: float

    def bound(self, ref: np.ndarray) -> np.ndarray:
        """Elementwise allowed absolute error for the reference tensor `ref`."""
        ref = np.asarray(ref, dtype=np.float64)
        finite = np.abs(ref[np.isfinite(ref)])
        scale = max(1.0, float(finite.max())) if finite.size else 1.0
        return self.atol * scale + self.rtol * np.abs(ref)

    def describe(self) -> str:
        return f"atol {self.atol:.1e} x max(1, max|ref|) + rtol {self.rtol:.1e} x |ref|"


SAFETY = 10
"""Safety factor over the largest error measured in ~77k comparisons (FLOORS): every example drawn so
far sits 10-37x (after rounding) below its tolerance, and ~100-1000x at the 99th percentile, while a
planted backward bug (an error of 1e-3..1 relative) exceeds it by 1e8+ in float64 and 1e2+ in
float32 (test_planted_bugs.py)."""

FLOORS = {
    # largest |np - ref| / max(1, max|ref|) measured (see module docstring), 2026-11 on this machine;
    # re-measure after changing a kernel: python -m parity_tests.measure_floors
    # (p99 for comparison: float64 output 1.2e-15, grads 3e-15; float32 output 5.8e-7, grads 3e-6)
    "float64": {"output": 1.34e-14, "attention_weights": 8.3e-16, "input_grad": 4.23e-14,
                "param_grad": 1.05e-13, "loss": 8.4e-16, "optimizer_state": 1.72e-15},
    "float32": {"output": 2.9e-6, "attention_weights": 4.5e-7, "input_grad": 5.9e-5,
                "param_grad": 6.5e-5, "loss": 5.2e-7, "optimizer_state": 1.65e-7},
}


def _round_up(x: float) -> float:
    """Round up to 1, 2 or 5 times a power of ten (so the table reads cleanly)."""
    e = int(np.floor(np.log10(x)))
    for m in (1, 2, 5, 10):
        v = float(f"{m}e{e}")                      # exact decimal, e.g. 2e-12 not 2.0000000000000002e-12
        if v >= x * (1 - 1e-12):
            return v
    return float(f"1e{e + 1}")  # pragma: no cover


TOLERANCES: dict[str, dict[str, Tolerance]] = {
    dt: {q: Tolerance(atol=_round_up(f * SAFETY), rtol=_round_up(f * SAFETY)) for q, f in fl.items()}
    for dt, fl in FLOORS.items()
}


def dtype_name(dtype) -> str:
    """'float32' / 'float64' from a numpy/torch dtype, a type or a string."""
    if dtype is None:
        raise ValueError("dtype: expected float32 or float64, got None")
    name = str(getattr(dtype, "name", None) or getattr(dtype, "__name__", None) or dtype)
    name = name.replace("torch.", "")
    return {"float": "float64", "double": "float64", "single": "float32"}.get(name, name)


def tolerance(dtype, quantity: str) -> Tolerance:
    """The Tolerance for comparing `quantity` computed in `dtype` (float32 or float64)."""
    name = dtype_name(dtype)
    if name not in TOLERANCES:
        raise KeyError(f"tolerance: dtype expected one of {sorted(TOLERANCES)}, got {name!r}")
    if quantity not in QUANTITIES:
        raise KeyError(f"tolerance: quantity expected one of {QUANTITIES}, got {quantity!r}")
    return TOLERANCES[name][quantity]


def scaled(tol: Tolerance, factor: float) -> Tolerance:
    """`tol` times a condition number `factor` >= 1 (for inputs whose conditioning is known to
    amplify rounding, e.g. LayerNorm of nearly constant rows: see conditioning.py). Callers must
    say why in a comment where they use it."""
    f = max(1.0, float(factor))
    return Tolerance(tol.atol * f, tol.rtol * f)
