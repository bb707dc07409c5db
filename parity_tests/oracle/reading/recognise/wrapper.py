"""Recogniser: a module that only wraps the component's block, `self.mha =
torch.nn.MultiheadAttention(...)` with a forward passing its arguments through. When resolving at the
top level leaves weights unmapped and every parameter lives under one child, the block is resolved
under that child instead (the mapping then reads `q_proj.weight <- mha.in_proj_weight (...)`)."""
from __future__ import annotations


def resolve(r, kind: str) -> None:
    """r: the Resolver, after resolving `kind` at the top level."""
    names = r.space.names
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
