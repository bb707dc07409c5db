"""Structural cases drawn on purpose, beside the random search (parent side).

Random sizes rarely land on every structure a component has: cross-attention with equal query
and key lengths (>= 2), a non-causal mask with Tq == Tk, one head and several, batch 1 and
several. Code wrong only there (keys computed from the query whenever the lengths match, any mask
replaced by the causal one when Tq == Tk, a bug at one batch size) then scores. So every check of
an attention component runs these cases after a random search that found nothing (a failure the
random search finds keeps its shrunk, minimal counterexample), with array seeds derived from the
search's seed (the hidden search gets its own values):

    for ex in cases(comp, fixed, caps, seed): ...   # concrete example dicts of comp.strategy's form
    covered(comp, caps)                             # one line for the report

Only `sdpa` and `mha` have cases here (their structure is where the shape bugs live); sizes the
user fixed with --set are kept. The last case is longer than the random search draws (19 queries,
37 keys): code sized for the lengths a search uses is wrong only there (`fits_the_draws`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..reading.findings import Findings

# (B, H, d_head, Tq, Tk, mask kind)
_PLAN = [(2, 2, 2, 3, 3, k) for k in ("none", "padding", "causal", "causal_padding", "random",
                                      "random_2d")] + \
        [(2, 2, 2, 2, 4, k) for k in ("none", "padding", "causal", "random", "random_2d")] + \
        [(1, 1, 3, 3, 3, "random_2d"), (3, 3, 2, 4, 4, "random"), (3, 3, 2, 4, 2, "none")]


def mask_keep(kind: str, B: int, H: int, Tq: int, Tk: int, rng) -> list | None:
    if kind == "none":
        return None
    i, j = np.arange(Tq)[:, None], np.arange(Tk)[None, :]
    causal = np.broadcast_to(j <= i + (Tk - Tq), (B, 1, Tq, Tk))
    lengths = np.array([Tk - (b % Tk) for b in range(B)])             # every length differs
    padding = np.broadcast_to(j[None, None] < lengths[:, None, None, None], (B, 1, Tq, Tk))
    keep = {"padding": padding, "causal": causal, "causal_padding": padding & causal,
            "random": rng.random((B, H, Tq, Tk)) < 0.6,
            "random_2d": np.broadcast_to(rng.random((Tq, Tk)) < 0.6, (B, 1, Tq, Tk))}[kind]
    keep = np.array(keep, dtype=bool)
    empty = ~keep.any(-1)                                             # re-open a key per empty row
    diag = np.clip(np.arange(Tq) + (Tk - Tq), 0, Tk - 1)
    idx = np.nonzero(empty)
    keep[idx + (diag[idx[-1]],)] = True
    return keep.astype(int).tolist()


# (B, H, d_head, Tq, Tk): past the random search's lengths (1..16) and no power of two. Code sized
# for the lengths a search draws (scores in a buffer of 16 keys, a table of 16 positions) is wrong
# only here. Run only where the user left max_len free (a max_len fixed with --set bounds every
# case); the mask is the first of LONG_MASKS the candidate takes.
LONG = (2, 3, 5, 19, 37)
LONG_MASKS = ("random", "padding", "causal_padding", "causal", "random_2d", "none")

# sdpa with scores far past exp's float64 range (|q|, |k| ~ 30, so scores ~ +-900 and more): a
# softmax without its row maximum subtracted overflows (inf / inf = NaN) where the reference does
# not. Width 1 makes every score one product, rounded alike by any correct implementation; float64
# only (in float32 one rounding of a score of 900 moves a weight by 1e-4, the tolerance itself).
LARGE_SCORES = {"B": 2, "H": 2, "Tq": 3, "Tk": 4, "dk": 1, "dv": 2, "scale": 30.0}


def _example(comp, fixed: dict, caps: Findings, plan: tuple, ex_seed: int, rng) -> dict:
    """One planned case as an example dict of comp.strategy's form, within the sizes fixed."""
    B, H, dh, Tq, Tk, kind = plan
    max_len = fixed.get("max_len", max(LONG))
    B = min(B, fixed.get("max_batch", B))
    Tq, Tk = min(Tq, max_len), min(Tk, max_len)
    if comp.name == "mha" and caps.self_attention:
        Tk = Tq
    if comp.name == "sdpa":
        H = min(H, fixed.get("max_heads", H))
        dh = min(dh, fixed.get("max_d_head", dh))
        ex = {"B": B, "H": H, "Tq": Tq, "Tk": Tk, "dk": dh, "dv": max(1, dh - 1 + (H % 2)),
              "mask": None, "seed": ex_seed}
    else:
        if "d_model" in fixed and "num_heads" in fixed:
            D, H = fixed["d_model"], fixed["num_heads"]
        elif "num_heads" in fixed:
            H = fixed["num_heads"]
            D = H * dh
        elif "d_model" in fixed:
            D = fixed["d_model"]
            H = max(h for h in range(1, min(H, D) + 1) if D % h == 0)
        else:
            D = H * dh
        ex = {"B": B, "Tq": Tq, "Tk": Tk, "d_model": D, "num_heads": H, "mask": None,
              "seed": ex_seed}
    keep = mask_keep(kind, B, H, Tq, Tk, rng)
    ex["mask"] = {"kind": kind, "keep": keep}
    return ex


def cases(comp, fixed: dict, caps: Findings, seed: int, dtype: str = "float64") -> list[dict]:
    if comp.name not in ("sdpa", "mha"):
        return []
    kinds = (caps.mask_kinds or {}).get("mask", comp.masks[0].kinds)
    rng = np.random.default_rng([int(seed) & 0xFFFFFFFF, 0x5EED])
    out = [_example(comp, fixed, caps, plan, int(rng.integers(0, 2**32)), rng)
           for plan in _PLAN if plan[-1] in kinds]
    if comp.name == "sdpa" and dtype == "float64":
        cap = {"B": "max_batch", "H": "max_heads", "Tq": "max_len", "Tk": "max_len",
               "dv": "max_d_head"}
        ex = {k: min(v, fixed.get(cap[k], v)) if k in cap else v for k, v in LARGE_SCORES.items()}
        out.append({**ex, "mask": {"kind": "none", "keep": None},
                    "seed": int(rng.integers(0, 2**32))})
    long_kind = next((k for k in LONG_MASKS if k in kinds), None)
    if "max_len" not in fixed and long_kind is not None:
        out.append(_example(comp, fixed, caps, LONG + (long_kind,), int(rng.integers(0, 2**32)),
                            rng))
    return out


def covered(comp, caps: Findings, n: int) -> str:
    cross = "self-attention only" if caps.self_attention else \
        "cross-attention with key = value, at equal and unequal lengths" if caps.shared_kv else \
        "cross-attention at equal and unequal lengths"
    kinds = (caps.mask_kinds or {}).get("mask", comp.masks[0].kinds)
    sizes = ("batch 1" + (", one head" if comp.name == "sdpa" else ", one head and several")
             if caps.one_sequence else "batch 1 to 3; one head and several")
    return f"structural cases compared: {n} ({cross}; masks {', '.join(kinds)}; {sizes})"
