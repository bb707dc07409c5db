"""Recogniser: one packed q|k|v (or k|v) projection whose rows are grouped by head. Written as
`qkv(x).reshape(B, T, H, 3 * d_k)` and then chunked, head h's query, key and value are the d_k rows
each of block h (rows h*3*d_k onwards), not the q | k | v thirds the plain packing reads. Shapes
cannot tell the two apart, so a probe on the first example with H >= 2 decides, as the layout probe
does for square matrices:

    the packed matrix holds q = k = 0 (every query attends uniformly) and v = A, the output
    projection C (random), every other weight 0 and the norms' gains 1: the output is
    mean(value) @ A.T @ C.T when the candidate reads the rows the way they were written, and
    something else (non-uniform attention, values mixed across heads) when it does not.

When the head-grouped writing gives that output and the plain one does not, every packed entry of
the instance is handed over (and its gradient read back) grouped by head, and the report says so.
The probe only picks how the reference's weights are handed over: every quantity is still compared
with the reference, so a candidate that reads its rows wrongly in both writings still fails."""
from __future__ import annotations

import numpy as np

from ..calls import Finished, run_limited
from .layout import PREFIX, array_out, masks_future_itself, probe_output, probe_weights

QKV = ("q_proj", "k_proj", "v_proj")


def _packed(inst) -> list:
    """The packed entries (weights and biases): those sharing one candidate array by rows."""
    return [e for e in inst.entries.values() if e.cand is not None and e.rows is not None
            and e.how == "packed"]


def _mark(inst, heads: int) -> None:
    for e in _packed(inst):
        e.grouped = heads


def place(adapter, inst, case) -> None:
    """Every freshly built instance: entries marked once the probe found head-grouped rows; the
    probe itself runs once, on the first instance whose example has two heads or more."""
    heads = int(case.hyper.get("num_heads", 1) or 1)
    if getattr(adapter, "qkv_grouped", False):
        _mark(inst, heads)
        return
    if getattr(adapter, "qkv_probed", False) or adapter.comp.name not in PREFIX or inst.obj is None \
            or adapter.hooks is not None or heads < 2 or not _packed(inst):
        return
    adapter.qkv_probed = True
    if _probe(adapter, inst, case, heads):
        adapter.qkv_grouped = True
        _mark(inst, heads)
        adapter.notes.append("the packed q|k|v projection's rows are grouped by head ([q | k | v] "
                             "of head 0, then head 1, ...): a probe (q = k = 0, v and the output "
                             "projection random) matched that writing, not the plain q | k | v "
                             "thirds; weights handed over and gradients read back so")


def _probe(adapter, inst, case, heads: int) -> bool:
    from ..slots import candidate_arrays
    params, AC, x, mem = probe_weights(adapter, case, seed=13)
    in_out = adapter.opts.weight_layout == "in_out"
    want = probe_output(adapter.comp.name, case.hyper, x, mem,
                        [A @ C if in_out else A.T @ C.T for A, C in AC], masks_future_itself(adapter, inst))
    dtype = adapter.opts.dtype
    tol = (1e-9 if dtype == "float64" else 1e-3) * max(1.0, float(np.abs(want).max()))
    fits = []
    for grouped in (0, heads):
        for e in _packed(inst):
            e.grouped = grouped
        got = _run(adapter, inst, candidate_arrays(inst.entries, params, dtype), x, mem)
        fits.append(got is not None and got.shape == x.shape
                    and bool(np.abs(got - want).max() <= tol))
    for e in _packed(inst):
        e.grouped = 0
    return fits == [False, True]


def _run(adapter, inst, arrays: dict, x: np.ndarray, mem: np.ndarray):
    dtype = adapter.opts.dtype
    try:
        for cname, arr in arrays.items():
            inst.slots[cname].set(arr)
        t = adapter.ops.from_np(x.astype(dtype))
        vals = {"x": t, "query": t, "key": t, "value": t, "key_value": t,
                "memory": adapter.ops.from_np(mem.astype(dtype))}
        vals.update({m.name: None for m in adapter.comp.masks})
        res = run_limited(lambda: inst.binding.call(inst.call, vals, {}), 10.0)
    except Exception:  # noqa: BLE001 - the search reports what is wrong with the candidate
        return None
    return array_out(res.value) if isinstance(res, Finished) else None
