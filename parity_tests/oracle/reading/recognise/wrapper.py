"""Recogniser: a module that only wraps the component's block, `self.mha =
torch.nn.MultiheadAttention(...)` with a forward passing its arguments through. When resolving at the
top level leaves weights unmapped and every parameter lives under one child, the block is resolved
under that child instead (the mapping then reads `q_proj.weight <- mha.in_proj_weight (...)`).
A single leaf component likewise: a LayerNorm class holding one `self.norm = nn.LayerNorm(...)`
and returning `self.norm(x)` has its weight and bias found under `norm.` (only when the top level
placed none of them, and the attribute holds nothing but a library norm's `weight` / `bias`)."""
from __future__ import annotations


def resolve(r, kind: str) -> None:
    """r: the Resolver, after resolving `kind` at the top level."""
    from ..trees import LEAVES, TREES
    names = r.space.names
    if kind not in TREES and kind in LEAVES:
        heads = {n.split(".", 1)[0] for n in names}
        if r.entries or r.map or not names or any("." not in n for n in names) or len(heads) != 1 \
                or any(n.split(".", 1)[1] not in ("weight", "bias") for n in names):
            return                     # only a library norm's own `weight` / `bias` under it
        if not r.leaf_block(kind, "", heads.pop(), None, ""):
            r.entries, r.claimed = {}, set()
        return
    if r.is_complete("") or not names or any("." not in n for n in names) or r.map:
        return
    heads = {n.split(".", 1)[0] for n in names}
    if len(heads) != 1:
        return
    snap = (dict(r.entries), set(r.claimed))
    r.entries, r.claimed = {}, set()
    r.block(kind, "", heads.pop())
    if not r.is_complete("") or len(r.entries) < len(snap[0]):
        r.entries, r.claimed = snap
