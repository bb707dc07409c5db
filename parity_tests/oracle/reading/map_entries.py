"""Every --map entry must act: a block map (`--map self_attn=attention`, a reference prefix mapped
to a candidate prefix) that placed no parameter under its target is an error, never ignored."""
from __future__ import annotations


def _cands(entry) -> list[str]:
    names = [entry.cand] if entry.cand else []
    return names + [p[0] for p in (entry.parts or ())]


def unused_block_maps(name_map: dict | None, ref_shapes: dict, entries: dict) -> list[str]:
    """'REF=CAND' for each block map that mapped nothing."""
    out = []
    for ref, target in (name_map or {}).items():
        t = target.strip()
        if ref in ref_shapes or t in ("", "-", "none", "None"):
            continue                      # parameter maps are checked where they are applied
        t = t[:-2] if t.endswith(".T") else t
        placed = [c for r, e in entries.items() if r.startswith(ref + ".") for c in _cands(e)]
        if not any(c == t or c.startswith(t + ".") for c in placed):
            out.append(f"{ref}={target}")
    return out
