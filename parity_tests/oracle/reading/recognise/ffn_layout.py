"""Recogniser: a feed-forward's square matrices (d_ff = d_model) kept (in, out) and used as x @ W
(NumPy code built from `Dense`-like parts), where shapes cannot tell the layout. Non-square
examples are oriented by their shapes; on the first square example (d_model >= 2) a probe decides:

    W1 = A, W2 = C (random), b1 = 100 (every hidden unit far on the linear side of ReLU, GELU, SiLU),
    b2 = 0: the output is (x @ A.T + 100) @ C.T for (out, in) matrices, (x @ A + 100) @ C for
    (in, out) ones. A feed-forward without biases gets positive inputs x in [1, 2) and a positive
    A of entries in [100, 200) / d_model instead, so every hidden unit is again >= 100 either way:
    (x @ A.T) @ C.T or (x @ A) @ C.

When the output is the second and not the first, the matrices are read as (in, out) (gradients
too) and the report says so. Like the attention probe (layout.py) it only picks how the reference's
weights are handed over; every quantity is still compared with the reference.
"""
from __future__ import annotations

import numpy as np

from ..calls import Finished, run_limited
from .layout import array_out

FFN = ("linear1.weight", "linear2.weight")
SHIFT = 100.0


def applies(adapter, inst, case) -> bool:
    if adapter.comp.name != "ffn" or adapter.opts.weight_layout != "out_in":
        return False
    if inst.obj is None and adapter.mode not in ("function", "pair"):
        return False
    if adapter.hooks is not None or getattr(adapter, "layout_probed", False):
        return False
    D, F = case.hyper.get("d_model", 0), case.hyper.get("d_ff", 0)
    if D != F or D < 2:
        return False                      # non-square: shapes decide; 1 x 1: no layout
    for ref in FFN:
        e = inst.entries.get(ref)
        if e is None or e.cand is None or e.parts or e.rows or e.cand_shape is not None \
                or e.how == "map":
            return False
    return True


def probe(adapter, inst, case) -> bool:
    """True when the candidate computes x @ W with its square feed-forward matrices."""
    from ..slots import candidate_arrays
    adapter.layout_probed = True
    D = case.hyper["d_model"]
    rng = np.random.default_rng(12)
    A, C = rng.standard_normal((D, D)), rng.standard_normal((D, D))
    x = rng.standard_normal((1, 3, D))
    params = {k: np.zeros_like(v) for k, v in case.params.items()}
    shift = SHIFT
    bias = inst.entries.get("linear1.bias")
    if "linear1.bias" in params and bias is not None and bias.cand is not None:
        params["linear1.bias"] = np.full_like(params["linear1.bias"], SHIFT)
    else:                                 # the candidate has no b1: x_j >= 1, A_jk >= SHIFT / D
        A, x, shift = (1.0 + rng.random((D, D))) * (SHIFT / D), 1.0 + rng.random((1, 3, D)), 0.0
    params["linear1.weight"], params["linear2.weight"] = A, C
    dtype = adapter.opts.dtype
    try:
        extra = {}
        for cname, arr in candidate_arrays(inst.entries, params, dtype).items():
            if inst.obj is None:
                extra[cname] = adapter.ops.from_np(arr)
            else:
                inst.slots[cname].set(arr)
        res = run_limited(lambda: inst.binding.call(inst.call, {"x": adapter.ops.from_np(
            x.astype(dtype))}, extra), 10.0)
    except Exception:  # noqa: BLE001 - the search reports what is wrong with the candidate
        return False
    got = array_out(res.value) if isinstance(res, Finished) else None
    if got is None or got.shape != x.shape:
        return False
    out_in, in_out = (x @ A.T + shift) @ C.T, (x @ A + shift) @ C
    tol = (1e-9 if dtype == "float64" else 1e-3) * max(1.0, float(np.abs(in_out).max()))
    return bool(np.abs(got - in_out).max() <= tol < np.abs(got - out_in).max())


def switch(adapter, case):
    """Read the square matrices as (in, out) from now on, and rebuild."""
    adapter.opts.weight_layout = "in_out"
    adapter.notes.append("the candidate computes x @ W in its feed-forward: a probe (W1, W2 random, "
                         "every hidden unit far positive) matched (in, out) square matrices, not (out, in); read as "
                         "--weight-layout in_out (gradients too)")
    return adapter.instantiate(case)
