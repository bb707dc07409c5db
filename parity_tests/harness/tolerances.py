"""Every parity tolerance of the project, in one table: per dtype and per quantity.

An element passes when

    |got - ref| <= atol * scale + rtol * |ref|,     scale = max(1, max |ref| over the tensor)

`atol` is measured in units of the tensor's own magnitude once that exceeds 1: rounding errors of a
sum or a matrix product grow with the size of its terms, not with the size of one result element, so
an element that cancels to ~0 inside a tensor of gradients of size 30 carries an error ~30x that of a
tensor of size 1. For tensors of magnitude <= 1 (outputs of LayerNorm-ed layers, attention weights,
most gradients in the suite) this is exactly `atol + rtol * |ref|`.

Floors measured on this machine (2-core x86-64 CPU, numpy 2.4 + OpenBLAS, torch 2.13 CPU, TF32 off,
explicit attention path), npformer vs torchformer, by `python -m parity_tests.measure_floors`:
see the FLOORS table below (largest err / scale over all components, models and examples drawn).
Tolerances are the floor times SAFETY, rounded up to a power of ten fraction; the rtol term equals the
atol term (an element of size |ref| ~ scale is allowed the same as a small one, twice at most).

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


SAFETY = 100
"""Safety factor over the measured floor (see FLOORS): wide enough that no seed of any profile comes
near it, narrow enough that a planted backward bug (an error of order 1e-2..1 relative) is caught
by 10+ orders of magnitude in float64 and 3+ in float32."""

FLOORS = {
    # largest |np - torch| / max(1, max|ref|) seen, per dtype and quantity (see module docstring).
    # PROVISIONAL: DESIGN.md's observed floors until parity_tests/measure_floors.py has been run.
    "float64": {"output": 1e-15, "attention_weights": 1e-15, "input_grad": 5e-15,
                "param_grad": 5e-15, "loss": 1e-15, "optimizer_state": 1e-15},
    "float32": {"output": 1e-6, "attention_weights": 1e-6, "input_grad": 3e-6,
                "param_grad": 3e-6, "loss": 1e-6, "optimizer_state": 1e-6},
}


def _round_up(x: float) -> float:
    """Round up to 1, 2 or 5 times a power of ten (so the table reads cleanly)."""
    e = np.floor(np.log10(x))
    for m in (1.0, 2.0, 5.0, 10.0):
        if m * 10.0 ** e >= x * (1 - 1e-12):
            return float(m * 10.0 ** e)
    return float(10.0 ** (e + 1))  # pragma: no cover


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
