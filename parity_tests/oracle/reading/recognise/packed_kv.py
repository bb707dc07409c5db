"""Recogniser: a cross-attention whose key and value projections are ONE packed (2*D, D) Linear
(`self.kv = nn.Linear(d, 2 * d)`, split with `chunk(2, -1)`), beside a query projection of its own.

Resolve: after the names placed q but neither k nor v, and no packed q|k|v was found, the block's
free matrices are looked at: when exactly one is (2*D, D) or (D, 2*D) (used as x @ W, so
transposed), it is read as k | v stacked, keys in rows 0:D, values in rows D:2D (the common
writing, `k, v = kv(m).chunk(2, -1)`). When three or more free square (D, D) matrices remain (k, v
and the output projection could be matrices of their own, placed by order), only a matrix whose
name says key and value (`kv`, `key_value`, `memory`, `context`, `cross`) is taken. Its bias is the
(2*D,) vector beside it, or the block's only free one. None or two such matrices: nothing is taken
(the interface error names the parameters).

Which half holds the values is then decided by behaviour, once, on the first freshly built
instance (place): the layout probe's weights (q = k = 0, v = A, output projection C random, every
other weight 0) are handed over keys first. A candidate that reads its rows keys first returns
mean(value) @ A.T @ C.T (or the (in, out) variant): its values are alive. One that reads them values
first gets v = 0 and returns exactly 0 there (for a layer: the layer's output without that
attention's term). Only that second outcome switches the two halves (values rows 0:D, keys D:2D),
and the report says so; anything else keeps keys first. The probe only picks how the reference's
weights are handed over: every quantity is still compared, so a wrong candidate still fails.
"""
from __future__ import annotations

import numpy as np

from ..calls import Finished, run_limited
from ..resolution import Entry
from .layout import PREFIX, array_out, masks_future_itself, probe_output, probe_weights
from .packed_shape import packed_bias

QKV = ("q_proj", "k_proj", "v_proj")
KV_WORDS = ("kv", "key_value", "keyvalue", "k_v", "memory", "context", "cross")
WHY = "found by its shape (2*d_model x d_model) beside the query's own projection: a packed k|v"


def resolve(r, ref_prefix: str, cand_prefix: str) -> bool:
    """Place k|v on the block's one free (2D, D) / (D, 2D) matrix when q is placed; True when placed."""
    q, k, v = (r.join(ref_prefix, f"{p}.weight") for p in QKV)
    if not all(n in r.ref_shapes for n in (q, k, v)) or q not in r.entries or k in r.entries \
            or v in r.entries:
        return False
    D = int(r.ref_shapes[q][0])
    if tuple(r.ref_shapes[q]) != (D, D) or D < 1:
        return False
    free = r.free_names(cand_prefix)
    hits = [n for n in free if r.space.shapes.get(n) is not None
            and tuple(r.space.shapes[n]) in ((2 * D, D), (D, 2 * D))]
    if len(hits) != 1:
        return False
    square = [n for n in free if r.space.shapes.get(n) is not None and tuple(r.space.shapes[n]) == (D, D)]
    if len(square) >= 3 and not any(w in hits[0].lower() for w in KV_WORDS):
        return False                    # k and v may be square matrices of their own (by order)
    cw = hits[0]
    transpose = tuple(r.space.shapes[cw]) == (D, 2 * D)
    for j, p in enumerate(QKV[1:]):
        ref = r.join(ref_prefix, f"{p}.weight")
        r.entries[ref] = Entry(ref, cw, transpose, (j * D, (j + 1) * D), "packed", why=WHY)
    r.claimed.add(cw)
    cb = packed_bias(r, cw, cand_prefix, 2 * D)
    if cb is not None:
        for j, p in enumerate(QKV[1:]):
            bref = r.join(ref_prefix, f"{p}.bias")
            if bref in r.ref_shapes:
                r.entries[bref] = Entry(bref, cb, False, (j * D, (j + 1) * D), "packed", why=WHY)
        r.claimed.add(cb)
    return True




def _packed_kv(inst) -> list:
    return [e for e in inst.entries.values() if e.why == WHY and e.rows is not None]


def _values_first(inst) -> None:
    for e in _packed_kv(inst):
        D = e.rows[1] - e.rows[0]
        e.rows = (D, 2 * D) if e.rows[0] == 0 else (0, D)
        e.why = WHY + ", values first (rows 0:d_model), as a probe found"


def place(adapter, inst, case) -> None:
    """Every freshly built instance: the halves switched once the probe found values first; the
    probe itself runs once, on the first instance with a packed k|v."""
    if getattr(adapter, "kv_values_first", False):
        _values_first(inst)
        return
    if getattr(adapter, "kv_probed", False) or adapter.comp.name not in PREFIX or inst.obj is None \
            or adapter.hooks is not None or not _packed_kv(inst):
        return
    adapter.kv_probed = True
    if _probe(adapter, inst, case):
        adapter.kv_values_first = True
        _values_first(inst)
        adapter.notes.append("the packed k|v projection holds the values first (rows 0:d_model) "
                             "and the keys second: a probe (keys handed over first as 0, values "
                             "random) gave the output with no value term; weights handed over and "
                             "gradients read back so")


def _probe(adapter, inst, case) -> bool:
    """True when the candidate's output is the one with its packed attentions' values at 0."""
    from ..slots import candidate_arrays
    params, AC, x, mem = probe_weights(adapter, case, seed=17)
    dtype = adapter.opts.dtype
    pres = PREFIX[adapter.comp.name]
    kv = [inst.entries.get(f"{pre}v_proj.weight") in _packed_kv(inst) for pre in pres]
    try:
        for cname, arr in candidate_arrays(inst.entries, params, dtype).items():
            inst.slots[cname].set(arr)
        t = adapter.ops.from_np(x.astype(dtype))
        vals = {"x": t, "query": t, "key": t, "value": t, "key_value": t,
                "memory": adapter.ops.from_np(mem.astype(dtype))}
        vals.update({m.name: None for m in adapter.comp.masks})
        res = run_limited(lambda: inst.binding.call(inst.call, vals, {}), 10.0)
    except Exception:  # noqa: BLE001 - the search reports what is wrong with the candidate
        return False
    got = array_out(res.value) if isinstance(res, Finished) else None
    if got is None or got.shape != x.shape:
        return False
    layouts = ([A.T @ C.T for A, C in AC], [A.T @ C for A, C in AC])
    causal = masks_future_itself(adapter, inst)
    keys_first = [probe_output(adapter.comp.name, case.hyper, x, mem, Ms, causal) for Ms in layouts]
    values_first = [probe_output(adapter.comp.name, case.hyper, x, mem,
                                 [np.zeros_like(M) if k else M for M, k in zip(Ms, kv)], causal)
                    for Ms in layouts]
    scale = max(1.0, max(float(np.abs(w).max()) for w in keys_first))
    tol = (1e-9 if dtype == "float64" else 1e-3) * scale

    def near(w):
        return bool(np.abs(got - w).max() <= tol)
    return any(near(w) for w in values_first) and not any(near(w) for w in keys_first)
