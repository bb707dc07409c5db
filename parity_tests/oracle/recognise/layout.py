"""Recogniser: bare square projection matrices used as `x @ W` (stored (in, out), CS231n style)
rather than `x @ W.T` (stored (out, in), as torch.nn.Linear). Shapes cannot tell a square matrix's
layout, so a probe on the first example decides, for multi-head attention, before the search:

    W_q = W_k = 0 (every query attends uniformly), W_v = A, W_o = C (random), biases 0,
    one sequence: the output is mean(value) @ A.T @ C.T for (out, in) matrices,
    mean(value) @ A @ C for (in, out) ones.

When the candidate's output is the second and not the first, its square matrices are read as
(in, out) (gradients too), and the report says so. Anything else keeps --weight-layout: a candidate
mixing layouts, or wrong, is then compared as usual and fails there. The probe cannot buy a match: it
only picks how the reference's weights are handed over, and every quantity is still compared with
the reference (a candidate that is right under one layout is right code).
"""
from __future__ import annotations

import numpy as np

from ..calls import Finished, run_limited

PROJ = ("q_proj", "k_proj", "v_proj", "out_proj")


def _out(value) -> np.ndarray | None:
    out = value[0] if isinstance(value, (tuple, list)) and value else value
    if hasattr(out, "detach"):
        out = out.detach().cpu().numpy()
    try:
        return np.asarray(out, dtype=np.float64)
    except (TypeError, ValueError):
        return None


def applies(adapter, inst) -> bool:
    if adapter.comp.name != "mha" or adapter.opts.weight_layout != "out_in":
        return False
    if inst.obj is None and adapter.mode not in ("function", "pair"):
        return False
    if adapter.hooks is not None or getattr(adapter, "_layout_probed", False):
        return False
    square = 0
    for p in PROJ:
        e = inst.entries.get(f"{p}.weight")
        if e is None or e.cand is None or e.parts or e.rows or e.cand_shape is not None:
            return False
        if e.how == "map":
            return False                 # the user said how it is kept
        square += 1
    return square == 4


def probe(adapter, inst, case) -> bool:
    """True when the candidate computes x @ W with its square matrices (switch to in_out). Modules
    get the probe's weights written into them, functions as arguments."""
    from ..slots import candidate_arrays
    D = case.hyper["d_model"]
    if D < 2:
        return False                     # a 1 x 1 matrix has no layout: decide on a later example
    adapter._layout_probed = True
    rng = np.random.default_rng(11)
    A, C = rng.standard_normal((D, D)), rng.standard_normal((D, D))
    params = {k: np.zeros_like(v) for k, v in case.params.items()}
    params["v_proj.weight"], params["out_proj.weight"] = A, C
    x = rng.standard_normal((1, 3, D))
    dtype = adapter.opts.dtype
    try:
        extra = {}
        for cname, arr in candidate_arrays(inst.entries, params, dtype).items():
            if inst.obj is None:                 # a function takes its weights as arguments
                extra[cname] = adapter.ops.from_np(arr)
            else:
                inst.slots[cname].set(arr)
        t = adapter.ops.from_np(x.astype(dtype))
        vals = {"x": t, "query": t, "key": t, "value": t}
        vals.update({m.name: None for m in adapter.comp.masks})
        res = run_limited(lambda: inst.binding.call(inst.call, vals, extra), 10.0)
    except Exception:  # noqa: BLE001 - the search reports what is wrong with the candidate
        return False
    got = _out(res.value) if isinstance(res, Finished) else None
    if got is None or got.shape != x.shape:
        return False
    m = x.mean(axis=1, keepdims=True)                        # (1, 1, D): uniform attention
    out_in = np.broadcast_to(m @ A.T @ C.T, x.shape)
    in_out = np.broadcast_to(m @ A @ C, x.shape)
    tol = (1e-9 if dtype == "float64" else 1e-3) * max(1.0, float(np.abs(in_out).max()))
    return bool(np.abs(got - in_out).max() <= tol < np.abs(got - out_in).max())
