"""One example in other modes (sandbox/modes.py runs them in the worker): a quantity that matched the
reference in the main run (autograd on, eval(), forward then backward) must come out the same
without autograd, in train() mode built with dropout 0, from the same instance called a second
time, and, for a NumPy backward, with another example's forward and backward run in between. A
difference is a mismatch of that quantity that names the mode: the reference check alone never runs
those paths.

Tolerance: the quantity's own reference tolerance at the check's dtype (harness.compare.measure),
with the main run's values as the expected ones, never bit equality. Correct code may take another
kernel there (nn.MultiheadAttention's and nn.TransformerEncoderLayer's fused inference path under
no_grad in eval(), scaled_dot_product_attention's backends), which rounds like any other correct
implementation; a path that differs by less than that tolerance would pass the reference comparison
as well. Runs in the parent, on validated float64 arrays.
"""
from __future__ import annotations

import numpy as np

from parity_tests.harness.compare import measure

from ..components import Case
from ..sandbox.modes import MODES

WHAT = {
    "nograd": ("differs under torch.no_grad() (inputs not requiring gradients, as at inference) "
               "from the same forward with autograd on, same weights and inputs: the inference "
               "path computes something else"),
    "train": ("differs in train() mode (or called with training=True), built and called with "
              "every dropout rate 0, from its eval() output, "
              "same weights and inputs: a dropout at a rate of its own (not the one it was given) "
              "or another training-only path"),
    "eval_rate": ("differs when called with training=False and a dropout rate of 0.5 from the "
                  "same call with the rate 0, same weights and inputs: dropout applied when not "
                  "training (it must be the identity then)"),
    "repeat": ("differs when the same instance is called a second time, after its first forward "
               "and backward, same weights and inputs: the first call left state behind (keys and "
               "values kept in a cache, weights changed in backward, a counter) that changes the "
               "next call"),
    "decoy": ("changes when another example's forward and backward run between this example's "
              "forward and its backward: the backward reads state a previous call left behind "
              "(module or class state) instead of its cache or its own instance"),
}


def _rows(case: Case, a: np.ndarray) -> np.ndarray:
    """Fully masked query rows zeroed, as the reference comparison does for the output."""
    if case.row_keep is None:
        return a
    keep = case.row_keep.reshape(case.row_keep.shape + (1,) * (a.ndim - 2))
    return np.where(keep, a, 0.0) if keep.ndim == a.ndim else a


def mode_difference(reply, key: str, kind: str, label: str, case: Case, dtype: str):
    """(mode, measure report) for the first mode whose `key` differs from the main run's, or None.
    A mode that returned this quantity with another shape, or not at all while returning others,
    differs too."""
    main = reply.values.get(key)
    if main is None:
        return None
    for mode in MODES:
        got = reply.modes.get(mode)
        if not got or (key not in got and key == "attention_weights"):
            continue            # weights returned only when asked for them, or no such mode here
        if key not in got:
            if mode == "decoy" or key != "output":
                continue
            got = {key: np.full(main.shape, np.nan)}
        a, b = got[key], main
        if key == "output" and a.shape == b.shape:
            a, b = _rows(case, a), _rows(case, b)
        rep = measure(f"{label} ({mode})", a, b, dtype=dtype, quantity=kind)
        if not rep.passed:
            return mode, rep
    return None
