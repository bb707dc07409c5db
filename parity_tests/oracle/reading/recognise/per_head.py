"""Recogniser: per-head weight lists. Multi-head attention written as H separate projections
d_model -> d_k, concatenated (`self.heads = ModuleList([Head(...) for _ in range(h)])` with
`query`/`key`/`value` Linear layers each, `self.W_q = ModuleList([...])`, or a Python list of NumPy
matrices). Head i's projection is rows i*d_k:(i+1)*d_k of the reference's (d_model, d_model) weight,
in the (out, in) layout; its bias, when there is one (beside a per-head Linear weight, or a list of
biases `bq[i]` beside a list `Wq[i]`), the same rows of the bias."""
from __future__ import annotations

import re

PROJECTIONS = ("q_proj", "k_proj", "v_proj")
WEIGHT_LEAVES = ("weight", "w", "kernel", "weights")
BIAS_LEAVES = ("bias", "b", "biases")


def _alias_tokens(child) -> set[str]:
    return {a.lower() for a in child.aliases + child.raw_weight if "." not in a}


def _pieces(r, cand_prefix: str, tokens: set[str], H: int, dk: int, d_in: int) -> dict | None:
    """{head index: candidate weight name} for one projection, or None if not exactly 0..H-1."""
    skip = len(cand_prefix) + 1 if cand_prefix else 0
    found: dict[int, list[str]] = {}
    for name in r.free_names(cand_prefix):
        parts = name[skip:].split(".")
        low = [p.lower() for p in parts]
        idx = [int(p) for p in parts if re.fullmatch(r"\d+", p)]
        if len(idx) != 1 or not tokens & set(low):
            continue
        shape = tuple(r.space.shapes.get(name) or ())
        if shape not in ((dk, d_in), (d_in, dk)):
            continue
        if low[-1] not in WEIGHT_LEAVES and low[-1] not in tokens and not low[-1].isdigit():
            continue
        found.setdefault(idx[0], []).append(name)
    if sorted(found) != list(range(H)) or any(len(v) != 1 for v in found.values()):
        return None
    return {i: v[0] for i, v in found.items()}


def _bias_of(r, wname: str, dk: int, child=None) -> str | None:
    if "." not in wname:
        return None
    owner, leaf = wname.rsplit(".", 1)
    if leaf.isdigit() and child is not None:     # a list of bare matrices: a list of biases beside it
        parent = owner.rsplit(".", 1)[0] if "." in owner else ""
        for b in child.raw_bias:
            c = r.space.find(r.join(parent, f"{b}.{leaf}"))
            if c and c not in r.claimed and tuple(r.space.shapes[c]) in ((dk,), (1, dk)):
                return c
        return None
    if leaf.lower() not in WEIGHT_LEAVES:
        return None
    for b in BIAS_LEAVES:
        c = r.space.find(f"{owner}.{b}")
        if c and c not in r.claimed and tuple(r.space.shapes[c]) in ((dk,), (1, dk)):
            return c
    return None


def resolve(r, ref_prefix: str, cand_prefix: str) -> None:
    """Fill q/k/v projections the names did not settle from per-head pieces."""
    from ..resolver import Entry
    from ..trees import K, Q, V
    H = int(r.hyper.get("num_heads") or 0)
    if H < 1:
        return
    for proj, child in zip(PROJECTIONS, (Q, K, V)):
        wref, bref = r.join(ref_prefix, f"{proj}.weight"), r.join(ref_prefix, f"{proj}.bias")
        if wref in r.entries or wref not in r.ref_shapes:
            continue
        d_out, d_in = r.ref_shapes[wref]
        if d_out % H:
            continue
        dk = d_out // H
        pieces = _pieces(r, cand_prefix, _alias_tokens(child), H, dk, d_in)
        if pieces is None:
            continue
        parts, bparts = [], []
        for i in range(H):
            name = pieces[i]
            shape = tuple(r.space.shapes[name])
            bare = r.space.bare.get(name, True)
            transpose = shape == (d_in, dk) and (dk != d_in or (bare and r.layout == "in_out"))
            parts.append((name, (i * dk, (i + 1) * dk), transpose, shape))
            b = _bias_of(r, name, dk, child)
            if b is not None:
                bparts.append((b, (i * dk, (i + 1) * dk), False, tuple(r.space.shapes[b])))
        r.entries[wref] = Entry(wref, parts[0][0], how="per_head", parts=tuple(parts))
        r.claimed.update(p[0] for p in parts)
        if bref in r.ref_shapes and bref not in r.entries and len(bparts) == H:
            r.entries[bref] = Entry(bref, bparts[0][0], how="per_head", parts=tuple(bparts))
            r.claimed.update(p[0] for p in bparts)
