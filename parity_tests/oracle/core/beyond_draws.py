"""One case past the sizes the random search draws, for every component (parent side).

The search draws batches 1..4 and lengths 1..16 (whole models: 1..8), so code sized for them (keys
dropped past a buffer of 16, a positional table that wraps after 16 rows, a batch handled in chunks
of 4 with a bug in the last) matched and got full marks. After a search that found nothing, the
runner takes the last example it ran and runs it once more stretched: batch 6, lengths 19 and 23,
no power of two; the sizes of the weights stay as drawn. A positional table is compared at the
whole length it was built for (max_len, 64 unless --set; one example of B x max_len x d_model, the
cost of a few drawn ones), so a table right only for its first rows (24 rows repeated) is caught
whatever that count; a whole model at its built length less one (target) and that length (source),
BUILT_LEN at most (--set max_len larger is not followed: a bounded cost). Its masks are drawn again
in their kind at the new lengths; a whole model's padding lengths all differ.

    ex = stretched(comp, last_example, fixed, caps, seed)   # None when nothing can grow

Bounds the user fixed (--set max_batch / max_len / max_seq) are kept, and code written for one
sequence (batch 1, recognise/function_calls) stays at batch 1.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .structural import mask_keep

if TYPE_CHECKING:
    from ..reading.findings import Findings

BATCH = 6
LENGTHS = {"T": 19, "Tq": 19, "S": 23, "Tk": 23}        # queries, then keys / memory
BUILT_LEN = 64        # the max_len a positional table or a whole model is built with (unless --set)


def _bounded(comp, base: dict, fixed: dict) -> dict[str, int]:
    """The stretched lengths within what the user fixed: a positional table at the whole length it
    was built for, a whole model's target and source at its built length less one and at it."""
    out = dict(LENGTHS)
    if comp.name == "positional":
        out = {"T": int(base.get("max_len", fixed.get("max_len", BUILT_LEN)))}
    elif comp.name == "model":
        top = min(BUILT_LEN, int(fixed.get("max_len", BUILT_LEN)))
        out = {"T": max(1, top - 1), "S": top}
    for key in ("max_len", "max_seq"):
        if key in fixed:
            out = {k: min(v, int(fixed[key])) for k, v in out.items()}
    return out


def stretched(comp, base: dict | None, fixed: dict, caps: Findings, seed: int) -> dict | None:
    """`base` (an example of comp.strategy's form) at batch BATCH and the lengths above, or None;
    its masks and array seed drawn from the check's `seed`."""
    if not isinstance(base, dict) or "B" not in base:
        return None
    B = 1 if caps.one_sequence else min(BATCH, int(fixed.get("max_batch", BATCH)))
    ex = resized(comp, base, B, _bounded(comp, base, fixed), caps,
                 np.random.default_rng([int(seed) & 0xFFFFFFFF, 0xB16]))
    if all(ex.get(k) == base.get(k) for k in ("B", *LENGTHS)):
        return None                         # the user's bounds leave nothing to stretch
    return ex


def resized(comp, base: dict, B: int, lengths: dict[str, int], caps: Findings, rng) -> dict:
    """`base` at batch B and `lengths` ({"T": .., "Tq": ..}; keys it lacks are skipped), its masks
    drawn again in their kind, a whole model's padding lengths all different, a new array seed."""
    ex = dict(base)
    ex["B"] = B
    for key, n in lengths.items():
        if key in ex:
            ex[key] = n
    if comp.name == "mha" and (caps.self_attention or base.get("Tq") == base.get("Tk")):
        ex["Tk"] = ex["Tq"]                 # self-attention only, or a layer that needs Tq = Tk
    for side, length in (("src_len", "S"), ("tgt_len", "T")):      # a whole model's paddings
        if side in ex:
            ex[side] = [ex[length] - (b % ex[length]) for b in range(B)]
    H = int(ex.get("num_heads", ex.get("H", 1)))
    for m in comp.masks:
        spec = ex.get(m.name)
        if isinstance(spec, dict) and spec.get("keep") is not None:
            ex[m.name] = {"kind": spec["kind"],
                          "keep": mask_keep(spec["kind"], B, H, ex[m.q], ex[m.k], rng)}
    ex["seed"] = int(rng.integers(0, 2**32))
    return ex


def note(ex: dict) -> str:
    sizes = ", ".join(f"{k}={ex[k]}" for k in ("B", "T", "Tq", "S", "Tk") if k in ex)
    return (f"a case past the search's sizes compared ({sizes}): code sized for the batches and "
            f"lengths a search draws is wrong only there")

