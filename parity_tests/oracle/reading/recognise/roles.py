"""Recogniser: which square matrix of a multi-head attention does what, found by probing when names
could not tell (the four projections were mapped by registration order: `A, B, C, D`, `W1..W4`).

An invariance identifies each one, whatever it is called and however it is stored. With the biases
at 0 and A a random orthogonal matrix:

- the query projection P is the one matrix for which replacing the query input x by x @ A and P by
  P @ A (stored (out, in): q = x @ P.T) or by A.T @ P (stored (in, out): q = x @ P) leaves the output
  unchanged; the same for the key and the value projections with their inputs;
- the output projection is the remaining matrix for which replacing P by A @ P ((out, in)) or by
  P @ A.T ((in, out)) turns the output y into y @ A.T.

Exactly one matrix and one layout must pass each test, and all four the same layout; otherwise
nothing changes (the search compares the order mapping as before). Biases mapped by order follow
their matrix. The probe only decides where the reference's weights go; every quantity is still
compared with the reference, so it cannot buy a match. The mapping lines say `role found by probing`.
"""
from __future__ import annotations

import numpy as np

from ..calls import Finished, run_limited
from ..resolution import Entry
from .layout import array_out

PROJ = ("q_proj", "k_proj", "v_proj", "out_proj")
INPUTS = {"q_proj": "query", "k_proj": "key", "v_proj": "value"}


def applies(adapter, inst) -> bool:
    if adapter.comp.name != "mha" or adapter.hooks is not None or \
            adapter.caps.self_attention or adapter.caps.list_input or adapter.caps.shared_kv:
        return False
    es = [inst.entries.get(f"{p}.weight") for p in PROJ]
    if any(e is None or e.cand is None or e.parts or e.rows or e.cand_shape is not None
           or e.pre_shape is not None or e.how == "map" for e in es):
        return False
    return any(e.how == "order" for e in es) and len({e.cand for e in es}) == 4


def probe(adapter, inst, case) -> dict | None:
    """{ref weight: (cand, transpose)} when every role and one layout were identified, else None."""
    D, dtype = int(case.hyper["d_model"]), adapter.opts.dtype
    cands = [inst.entries[f"{p}.weight"].cand for p in PROJ]
    rng = np.random.default_rng(13)
    mats = {c: rng.standard_normal((D, D)) / np.sqrt(D) for c in cands}
    zeros = {e.cand: np.zeros(inst.slots[e.cand].shape if inst.obj is not None else
                              case.params[ref].shape)
             for ref, e in inst.entries.items() if e.cand is not None and e.cand not in mats}
    A, _ = np.linalg.qr(rng.standard_normal((D, D)))
    x = {"query": rng.standard_normal((1, 3, D)), "key": rng.standard_normal((1, 4, D)),
         "value": rng.standard_normal((1, 4, D))}

    def run(arrs: dict, inputs: dict):
        extra = {}
        for c, a in {**zeros, **arrs}.items():
            if inst.obj is None:
                extra[c] = adapter.ops.from_np(a.astype(dtype))
            else:
                inst.slots[c].set(a.astype(dtype))
        vals = {k: adapter.ops.from_np(v.astype(dtype)) for k, v in inputs.items()}
        vals.update({m.name: None for m in adapter.comp.masks})
        def call():
            try:
                return inst.binding.call(inst.call, vals, extra)
            except Exception:  # noqa: BLE001 - caught here: its text may be hostile
                return None
        res = run_limited(call,
                          min(10.0, float(adapter.opts.timeout or 10.0)))
        return array_out(res.value) if isinstance(res, Finished) else None

    def same(a, b) -> bool:
        tol = (1e-9 if dtype == "float64" else 1e-4) * max(1.0, float(np.abs(b).max()))
        return a is not None and a.shape == b.shape and float(np.abs(a - b).max()) <= tol

    base = run(mats, x)
    if base is None or base.shape != (1, 3, D) or not np.all(np.isfinite(base)):
        return None
    found: dict[str, tuple] = {}
    for ref, name in INPUTS.items():
        moved = dict(x, **{name: x[name] @ A})
        hits = [(c, lay) for c in cands for lay, P in (("out_in", mats[c] @ A),
                                                      ("in_out", A.T @ mats[c]))
                if same(run(dict(mats, **{c: P}), moved), base)]
        if len(hits) != 1:
            return None
        found[ref] = hits[0]
    left = [c for c in cands if c not in {h[0] for h in found.values()}]
    if len(left) != 1:
        return None
    hits = [lay for lay, P in (("out_in", A @ mats[left[0]]), ("in_out", mats[left[0]] @ A.T))
            if same(run(dict(mats, **{left[0]: P}), x), base @ A.T)]
    if len(hits) != 1:
        return None
    found["out_proj"] = (left[0], hits[0])
    if len({lay for _, lay in found.values()}) != 1:
        return None
    return {f"{ref}.weight": (c, lay == "in_out") for ref, (c, lay) in found.items()}


def apply(inst, roles: dict) -> None:
    """Rewrite the four weight entries (and biases mapped by order, which follow their matrix)."""
    before = {inst.entries[f"{p}.weight"].cand: p for p in PROJ}
    biases = {p: inst.entries.get(f"{p}.bias") for p in PROJ}
    for p in PROJ:
        cand, transpose = roles[f"{p}.weight"]
        inst.entries[f"{p}.weight"] = Entry(f"{p}.weight", cand, transpose, how="role")
        old = biases[before[cand]]
        if old is not None and old.how == "order" and f"{p}.bias" in inst.entries:
            inst.entries[f"{p}.bias"] = Entry(f"{p}.bias", old.cand, old.transpose, how="order")


def place(adapter, inst) -> None:
    """Square attention matrices no name placed: their roles found once, on a probe example of
    its own (d_model 4: at d_model 1 the query and key tests cannot tell apart), then applied to
    every instance."""
    if not applies(adapter, inst):
        return
    if not hasattr(adapter, "found_roles"):
        from .function_calls import EXAMPLES
        adapter.found_roles = None
        try:
            pc = adapter.comp.build(dict(EXAMPLES["mha"]), adapter.opts.dtype, adapter.caps)
            pinst = adapter.instantiate(pc)
            if applies(adapter, pinst):
                adapter.found_roles = probe(adapter, pinst, pc)
        except Exception:  # noqa: BLE001 - the search reports what is wrong with the candidate
            adapter.found_roles = None
        if adapter.found_roles:
            adapter.layout_probed = True
            adapter.notes.append(
                "the attention's square matrices were placed by probing (an input transformed by "
                "a random orthogonal matrix, undone by one matrix only): " + ", ".join(
                    f"{r.split('.')[0]} <- {c}" for r, (c, _) in adapter.found_roles.items()))
    if adapter.found_roles:
        apply(inst, adapter.found_roles)
