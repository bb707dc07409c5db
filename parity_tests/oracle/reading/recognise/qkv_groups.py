"""Recogniser: one packed q|k|v (or k|v) projection whose rows are in another order than the plain
q | k | v thirds. Written as `qkv(x).reshape(B, T, H, 3 * d_k)` and then chunked, head h's query,
key and value are the d_k rows each of block h (rows h*3*d_k onwards); split by einops as
`'b t (d k h) -> k b h t d'`, row d * 3H + k * H + h is width d of part k of head h. Every order of
the (part, head, width) axes is one (reading/packed_order.py). Shapes cannot tell them apart, so a
probe on a fresh instance decides, as the layout probe does for square matrices:

    the packed matrix holds q = k = 0 (every query attends uniformly) and v = A, the output
    projection C (random), every other weight 0 and the norms' gains 1: the output is
    mean(value) @ A.T @ C.T when the candidate reads the rows the way they were written, and
    something else (non-uniform attention, values mixed across heads or widths) when it does not.

The orders are tried plain first; the first whose writing gives that output is taken, and every
packed entry of the instance is handed over (and its gradient read back) in it, said in the
report. A mask the forward requires gets an all-attend one, as the examples pass it. Sizes where
two orders place every row alike (one head, a head width of 1) are probed once per size; the
first probe with two heads or more and a head width of 2 or more decides for the whole check.
The probe only picks how the reference's weights are handed over: every quantity is still
compared with the reference, so a candidate that reads its rows wrongly in every order still
fails."""
from __future__ import annotations

import numpy as np

from ..calls import Finished, run_limited
from ..packed_order import HEAD_GROUPED, ORDERS, PLAIN, WORDS, same_rows
from .layout import PREFIX, all_attend, array_out, masks_future_itself, probe_output, probe_weights

QKV = ("q_proj", "k_proj", "v_proj")
SIZES = 6
"""Sizes (heads, head width) probed at most before the order is left plain: shrinking a failure
builds many instances, and a candidate wrong in every order must not pay a probe for each."""


def _packed(inst) -> list:
    """The packed entries (weights and biases): those sharing one candidate array by rows."""
    return [e for e in inst.entries.values() if e.cand is not None and e.rows is not None
            and e.how == "packed"]


def _mark(inst, heads: int, order: tuple) -> None:
    for e in _packed(inst):
        e.grouped, e.group_order = (0, PLAIN) if order == PLAIN else (heads, order)


def place(adapter, inst, case) -> None:
    """Every freshly built instance: entries marked in the order the probe found (once decided,
    for every instance; before that, per size)."""
    heads = int(case.hyper.get("num_heads", 1) or 1)
    decided = getattr(adapter, "qkv_order", None)
    if decided is not None:
        _mark(inst, heads, decided)
        return
    if adapter.comp.name not in PREFIX or inst.obj is None or adapter.hooks is not None \
            or not _packed(inst):
        return
    width = int(case.hyper.get("d_model", 0) or 0) // heads
    seen = adapter.__dict__.setdefault("qkv_orders_seen", {})
    if (heads, width) not in seen:
        if len(seen) >= SIZES or (heads < 2 and width < 2):
            return
        seen[(heads, width)] = _probe(adapter, inst, case, heads, width)
    order = seen[(heads, width)]
    if order is None:
        return
    _mark(inst, heads, order)
    if heads >= 2 and width >= 2:               # decided: said once (per size it is in the mapping)
        adapter.qkv_order = order
        if order != PLAIN:
            adapter.notes.append(_note(order))


def _note(order: tuple) -> str:
    if order == HEAD_GROUPED:
        return ("the packed q|k|v projection's rows are grouped by head ([q | k | v] of head 0, then "
                "head 1, ...): a probe (q = k = 0, v and the output projection random) matched that "
                "writing, not the plain q | k | v thirds; weights handed over and gradients read "
                "back so")
    return (f"the packed q|k|v projection's rows are ordered {WORDS[order]}: a probe (q = k = 0, "
            f"v and the output projection random) matched that writing, not the plain q | k | v "
            f"thirds; weights handed over and gradients read back so")


def _probe(adapter, inst, case, heads: int, width: int):
    """The first order (plain first) whose writing gives the probe's output, or None."""
    from ..slots import candidate_arrays
    params, AC, x, mem = probe_weights(adapter, case, seed=13)
    in_out = adapter.opts.weight_layout == "in_out"
    want = probe_output(adapter.comp.name, case.hyper, x, mem,
                        [A @ C if in_out else A.T @ C.T for A, C in AC], masks_future_itself(adapter, inst))
    dtype = adapter.opts.dtype
    tol = (1e-9 if dtype == "float64" else 1e-3) * max(1.0, float(np.abs(want).max()))
    parts = max(len([f for f in _packed(inst) if f.cand == e.cand]) for e in _packed(inst))
    tried: list = []
    found = None
    for order in ORDERS:
        if any(same_rows(order, t, parts, heads, width) for t in tried):
            continue
        tried.append(order)
        _mark(inst, heads, order)
        got = _run(adapter, inst, candidate_arrays(inst.entries, params, dtype), x, mem)
        if got is not None and got.shape == x.shape and bool(np.abs(got - want).max() <= tol):
            found = order
            break
    _mark(inst, heads, PLAIN)
    return found


def _run(adapter, inst, arrays: dict, x: np.ndarray, mem: np.ndarray):
    dtype = adapter.opts.dtype
    try:
        for cname, arr in arrays.items():
            inst.slots[cname].set(arr)
        t = adapter.ops.from_np(x.astype(dtype))
        vals = {"x": t, "query": t, "key": t, "value": t, "key_value": t,
                "memory": adapter.ops.from_np(mem.astype(dtype))}
        vals.update({m.name: all_attend(adapter, m, x, mem) for m in adapter.comp.masks})
        res = run_limited(lambda: inst.binding.call(inst.call, vals, {}), 10.0)
    except Exception:  # noqa: BLE001 - the search reports what is wrong with the candidate
        return None
    return array_out(res.value) if isinstance(res, Finished) else None
