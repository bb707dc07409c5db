"""Recogniser: a whole layer's blocks and norms found by structure when their names say nothing.

- **Blocks** (`self_attention_block`, `attn_1` / `attn_2`, `mixer`): a self-attention,
  cross-attention or feed-forward block no name matched is looked for among the layer's direct
  sub-modules (then theirs), in registration order: the first one none of whose parameters is
  claimed yet that resolves COMPLETELY as that block (every projection found by name or order, with
  the reference's shapes) is taken. Blocks come in the reference's order (self-attention, then
  cross-attention, then feed-forward), as layers register them.
- **Norms** (`residual_connections.0.norm`, `sublayers.1.norm`, BERT's `attention.output.LayerNorm`
  and `output.LayerNorm`): when the layer's norms are not found by name and the candidate holds
  exactly as many unclaimed norm modules (a class named like a norm, or a path ending in a
  norm-like name) as the reference has norms, they are matched in registration order. In a whole
  model the same is done layer by layer (`encoder.layers.0.self_attn_connection.norm.gamma`), inside
  the candidate's module that holds the rest of that layer's weights.

- **Flat projections** (`self_q`, `cross_k`, `W_q_self`): an attention block with no sub-module of
  its own, its projections named for their role at the layer's level (flat_roles.py).

The mapping line says which rule placed each weight.
"""
from __future__ import annotations

from . import flat_roles


def _prefixes(r, cand_prefix: str, depth: int) -> list[str]:
    """Module paths `depth` levels below cand_prefix, in registration order."""
    base = (cand_prefix + ".") if cand_prefix else ""
    out = []
    for n in r.space.names:
        if not n.startswith(base):
            continue
        toks = n[len(base):].split(".")
        if len(toks) > depth:
            p = base + ".".join(toks[:depth])
            if p not in out:
                out.append(p)
    return out


def block(r, child, ref_child: str, cand_prefix: str) -> bool:
    """Place an unresolved mha/ffn block at the first unclaimed sub-module that resolves whole,
    else (attention) at projections named for their role at the layer's own level (flat_roles)."""
    for depth in (1, 2):
        for p in _prefixes(r, cand_prefix, depth):
            if any(n in r.claimed for n in r.space.names if n.startswith(p + ".")):
                continue
            snap = (dict(r.entries), set(r.claimed))
            r.block(child.kind, ref_child, p)
            if r.is_complete(ref_child):
                for ref in set(r.entries) - set(snap[0]):
                    e = r.entries[ref]
                    e.why = (e.why + "; " if e.why else "") + \
                        f"block found by structure at {p!r}"
                return True
            r.entries, r.claimed = snap
    return flat_roles.block(r, child, ref_child, cand_prefix)


def _norm_owners(r, prefix: str) -> list[str]:
    owners = []
    base = (prefix + ".") if prefix else ""
    for n in r.space.names:
        if n in r.claimed or not n.startswith(base) or "." not in n[len(base):]:
            continue
        path = n.rsplit(".", 1)[0]
        cls = (r.space.owner or {}).get(n, "").rsplit(".", 1)[-1].lower()
        last = path.rsplit(".", 1)[-1].lower()
        if ("norm" in cls or "norm" in last or last.startswith("ln")) and path not in owners:
            owners.append(path)
    return owners


STACKS = ("encoder.layers.", "decoder.layers.")


def _common(names: list[str]) -> str:
    parts = [n.split(".")[:-1] for n in names]
    out = []
    for toks in zip(*parts):
        if len(set(toks)) != 1:
            break
        out.append(toks[0])
    return ".".join(out)


def model_norms(r) -> None:
    """A model's layers: each layer's unresolved norm{i} matched to the unclaimed norm modules
    under the candidate module holding the rest of that layer's weights, in registration order."""
    layers = sorted({".".join(k.split(".")[:3]) for k in r.ref_shapes if k.startswith(STACKS)})
    for ref_layer in layers:
        missing = sorted({k[len(ref_layer) + 1:].split(".")[0] for k in r.ref_shapes
                          if k.startswith(ref_layer + ".") and k.endswith(".weight")
                          and k[len(ref_layer) + 1:].split(".")[0].startswith("norm")
                          and k not in r.entries})
        placed = [e.cand for k, e in r.entries.items() if k.startswith(ref_layer + ".") and e.cand]
        cand_layer = _common(placed) if placed else ""
        owners = _norm_owners(r, cand_layer) if cand_layer else []
        if not missing or len(owners) != len(missing):
            continue
        for ref, owner in zip(missing, owners):
            before = set(r.entries)
            if r.leaf_block("norm", f"{ref_layer}.{ref}", owner, None, cand_layer):
                for k in set(r.entries) - before:
                    e = r.entries[k]
                    e.why = (e.why + "; " if e.why else "") + "norm matched by registration order"


def norms(r, ref_prefix: str = "", cand_prefix: str = "") -> None:
    """Match the layer's unresolved norm{i} to its unclaimed norm modules in registration order."""
    if not ref_prefix and any(k.startswith(STACKS) for k in r.ref_shapes):
        return model_norms(r)
    refs = sorted({k.split(".")[0 if not ref_prefix else 1] for k in r.ref_shapes
                   if k.startswith((ref_prefix + ".") if ref_prefix else "")
                   and k.rsplit(".", 1)[0].split(".")[-1].startswith("norm")})
    missing = [n for n in refs if r.join(ref_prefix, f"{n}.weight") not in r.entries
               and r.join(ref_prefix, f"{n}.weight") in r.ref_shapes]
    if not missing:
        return
    owners = _norm_owners(r, cand_prefix)
    if len(owners) != len(missing):
        return
    for i, (ref, owner) in enumerate(zip(missing, owners)):
        before = set(r.entries)
        if r.leaf_block("norm", r.join(ref_prefix, ref), owner, None, cand_prefix):
            for k in set(r.entries) - before:
                e = r.entries[k]
                e.why = (e.why + "; " if e.why else "") + "norm matched by registration order"
