"""The resolver: map every reference parameter (npformer's `state_dict` names, such as
`self_attn.q_proj.weight`) to where the candidate keeps it (`attention.W_q.weight`,
`sublayer.0.norm.a_2`, a slice of `in_proj_weight`, a bare `W1` argument, ...). Names first, then,
inside one attention or feed-forward block, registration order for what names did not settle. An
explicit map (`--map REF=CAND`, `REF=CAND.T`, `REF=-` for "the candidate has none") wins over both; a
map key may also be a block (`--map self_attn=my_attention`). A square bare matrix is ambiguous and
follows `--weight-layout` (default out_in).
"""
from __future__ import annotations

from typing import Any, Callable

from . import map_entries
from .leaf_words import with_plurals
from .part_suffixes import with_holder_words
from .recognise import hooks
from .resolution import Entry, Space, any_layer  # noqa: F401 (the resolver's types, imported from here too)
from .resolve_fallbacks import FallbackMixin
from .signatures import InterfaceError
from .trees import LEAVES, TREES, Child

RESOLVE = hooks("resolve")


class Resolver(FallbackMixin):
    """Walks a component's tree, matching reference names to candidate names (packed q|k|v and
    registration order, for what names did not settle, in resolve_fallbacks.py)."""

    def __init__(self, space: Space, ref_shapes: dict[str, tuple], hyper: dict[str, Any],
                 name_map: dict[str, str] | None = None, layout: str = "out_in",
                 hints: dict | None = None):
        self.space = space
        self.hints = dict(hints or {})
        self.ref_shapes = ref_shapes
        self.hyper = hyper
        self.map = dict(name_map or {})
        self.layout = layout
        self.claimed: set[str] = set()
        self.entries: dict[str, Entry] = {}
        self.problems: list[str] = []

    # -- helpers ----------------------------------------------------------------------------------
    @staticmethod
    def join(prefix: str, name: str) -> str:
        if not name:
            return prefix
        return f"{prefix}.{name}" if prefix else name

    def _orient(self, ref: str, cand: str) -> bool | None:
        """False: same layout, True: transposed, None: shapes incompatible."""
        r = tuple(self.ref_shapes[ref])
        if self.space.shapes.get(cand) is None:  # a function argument: it takes what it is given
            return len(r) == 2 and self.layout == "in_out"
        c = tuple(self.space.shapes[cand])
        if len(r) == 2 and r[0] == r[1] and c == r:
            return self.space.bare.get(cand, True) and self.layout == "in_out"
        if c == r:
            return False
        if len(r) == 2 and c == (r[1], r[0]):
            return True
        return None

    def take(self, ref: str, cand: str, how: str = "name") -> bool:
        """Place candidate parameter `cand` as reference `ref` when its shape fits (transposed, in
        heads, or with unit axes as needed) and nothing claimed it yet; recognisers use it too."""
        if cand in self.claimed:
            return False
        # heads on axes of their own, seen when first built (one layer: the others' by its name)
        hint = self.hints.get(cand, self.hints.get(any_layer(cand)))
        if isinstance(hint, (int, tuple)) and self._take_heads(ref, cand, how, hint):
            return True
        shaped = RESOLVE.unit_axes_shape(self.ref_shapes[ref], self.space.shapes.get(cand))
        if shaped is not None:             # a (1, n) bias for the reference's (n,)
            self.entries[ref] = Entry(ref, cand, how=how, cand_shape=shaped,
                                      ref_shape=tuple(self.ref_shapes[ref]))
            self.claimed.add(cand)
            return True
        if self._take_heads(ref, cand, how, hint):
            return True                    # (d, H, d_head) einsum weights and the like
        t = self._orient(ref, cand)
        if t is None:
            return False
        self.entries[ref] = Entry(ref, cand, transpose=bool(t), how=how)
        self.claimed.add(cand)
        return True

    def _take_heads(self, ref: str, cand: str, how: str, hint) -> bool:
        c, r = self.space.shapes.get(cand), tuple(self.ref_shapes[ref])
        heads = RESOLVE.head_layout(ref, r, c, self.hyper, hint)
        if heads is not None:
            self.entries[ref] = Entry(ref, cand, heads[0], how=how, pre_shape=heads[1],
                                      perm=heads[2], cand_shape=tuple(c), ref_shape=r)
            self.claimed.add(cand)
        return heads is not None

    def free_names(self, prefix: str) -> list[str]:
        p = (prefix + ".") if prefix else ""
        return [n for n in self.space.names if n not in self.claimed and n.startswith(p)]

    # -- explicit map -----------------------------------------------------------------------------
    def _apply_map(self, ref: str) -> bool:
        if ref not in self.map:
            return False
        target = self.map[ref].strip()
        if target in ("", "-", "none", "None"):
            self.entries[ref] = Entry(ref, None, how="absent")
            return True
        transpose = target.endswith(".T")
        name = target[:-2] if transpose else target
        cand = self.space.find(name)
        if cand is None:
            raise InterfaceError(f"--map {ref}={target}: the candidate has no parameter {name!r} "
                                 f"(it has: {', '.join(self.space.names[:40])})")
        want = tuple(self.ref_shapes[ref])
        got = tuple(self.space.shapes[cand]) if self.space.shapes.get(cand) is not None else (
            want[::-1] if transpose else want)
        if transpose:
            got = got[::-1]
        if got != want:
            raise InterfaceError(f"--map {ref}={target}: shape {tuple(self.space.shapes[cand])} "
                                 f"{'(transposed ' + str(got) + ') ' if transpose else ''}does not "
                                 f"fit the reference's {want}")
        self.entries[ref] = Entry(ref, cand, transpose=transpose, how="map")
        self.claimed.add(cand)
        return True

    # -- leaves -----------------------------------------------------------------------------------
    def leaf_block(self, kind: str, ref_prefix: str, cand_prefix: str, child: Child | None,
                   parent_cand: str) -> bool:
        """Resolve a linear/norm/embedding at cand_prefix; True when its required leaves are found."""
        leaves = LEAVES[kind]
        found_any = False
        for leaf, aliases, _req in leaves:
            ref = self.join(ref_prefix, leaf)
            if ref not in self.ref_shapes or ref in self.entries:
                found_any = found_any or ref in self.entries
                continue
            for a in with_plurals(aliases):        # `weights` / `biases` on a norm too
                cand = self.space.find(self.join(cand_prefix, a))
                if cand and self.take(ref, cand):
                    found_any = True
                    break
        return all(self.join(ref_prefix, leaf) in self.entries for leaf, _, req in leaves
                   if req and self.join(ref_prefix, leaf) in self.ref_shapes) and found_any

    def linear_raw(self, ref_prefix: str, parent_cand: str, child: Child) -> bool:
        """A Linear (or a norm) kept as bare arrays beside its siblings (W_q, b_q; gamma1, beta1)."""
        wref, bref = self.join(ref_prefix, "weight"), self.join(ref_prefix, "bias")
        if wref not in self.entries:
            for a in child.raw_weight:
                cand = self.space.find(self.join(parent_cand, a))
                if cand and self.take(wref, cand):
                    break
        if wref not in self.entries:
            return False
        if bref in self.ref_shapes and bref not in self.entries:
            for a in child.raw_bias:
                cand = self.space.find(self.join(parent_cand, a))
                if cand and self.take(bref, cand):
                    break
        return True

    # -- blocks -----------------------------------------------------------------------------------
    def block(self, kind: str, ref_prefix: str, cand_prefix: str) -> None:
        """Resolve every child of a block (mha, ffn, layers, model) at cand_prefix."""
        children = TREES[kind]
        for child in children:
            for ref_child in self._expand(child, ref_prefix):
                self.child(child, ref_child, cand_prefix)
        if kind == "mha":
            self._packed_qkv(ref_prefix, cand_prefix)
            RESOLVE.per_head(self, ref_prefix, cand_prefix)
        if kind in ("mha", "ffn"):
            self._by_order(children, ref_prefix, cand_prefix)

    def _expand(self, child: Child, ref_prefix: str) -> list[str]:
        if "{i}" not in child.ref:
            name = self.join(ref_prefix, child.ref)
            return [name] if any(r == name or r.startswith(name + ".") for r in self.ref_shapes) else []
        n = int(self.hyper.get(child.count, 0))
        return [self.join(ref_prefix, child.ref.replace("{i}", str(i))) for i in range(n)]

    def _child_aliases(self, child: Child, ref_child: str) -> list[str]:
        # a block map (--map self_attn=attention) replaces the aliases
        rel_keys = [ref_child]
        for k in rel_keys:
            if k in self.map:
                return [self.map[k]]
        if "{i}" in child.ref:
            i = ref_child.rsplit(".", 1)[-1]
            return [f"{a}.{i}" for a in child.aliases]
        return list(child.aliases) if child.kind in LEAVES else with_holder_words(child.aliases)

    def child(self, child: Child, ref_child: str, cand_prefix: str) -> None:
        leaf_kinds = ("linear", "norm", "embedding")
        best = None
        if child.kind in leaf_kinds:
            for leaf, _, _ in LEAVES[child.kind]:
                self._apply_map(self.join(ref_child, leaf))
        for alias in self._child_aliases(child, ref_child):
            p = self.join(cand_prefix, alias)
            if child.kind in leaf_kinds:
                bare = self.space.find(p)
                if bare and child.kind == "linear" and self.take(self.join(ref_child, "weight"), bare):
                    self.linear_raw(ref_child, cand_prefix, child)
                    return
                if bare and child.kind == "embedding" and self.take(self.join(ref_child, "weight"), bare):
                    return
                if alias and not self.space.has_prefix(p + "."):
                    continue
                if self.leaf_block(child.kind, ref_child, p, child, cand_prefix):
                    return
            else:
                if alias and not self.space.has_prefix(p + "."):
                    continue
                snap = (dict(self.entries), set(self.claimed))
                self.block(child.kind, ref_child, p)
                if self.is_complete(ref_child):
                    return
                gained = len(self.entries) - len(snap[0])
                if gained > 0 and (best is None or gained > best[0]):
                    best = (gained, dict(self.entries), set(self.claimed))
                self.entries, self.claimed = snap
        if child.kind in ("mha", "ffn") and RESOLVE.structure_block(self, child, ref_child, cand_prefix):
            return                         # a block no name matched (in a layer, at any depth), found by what it holds
        if best is not None:  # nothing complete: keep the attempt that found the most
            self.entries, self.claimed = best[1], best[2]
            return
        if child.kind in ("linear", "norm") and child.raw_weight and \
                self.linear_raw(ref_child, cand_prefix, child):
            return                         # bare arrays beside their siblings (W_q, b_q; gamma1, beta1)
        if child.kind == "norm":           # Add & Norm inside the attention / feed-forward block
            RESOLVE.inner_norm(self, ref_child, cand_prefix)

    def is_complete(self, ref_prefix: str) -> bool:
        """Every required weight (Linear/Embedding weights) under ref_prefix has an entry."""
        need = [r for r in self.ref_shapes if (not ref_prefix or r.startswith(ref_prefix + "."))
                and r.endswith(".weight") and len(self.ref_shapes[r]) == 2]
        return all(r in self.entries for r in need)

    # -- entry point ------------------------------------------------------------------------------
    def run(self, kind: str) -> dict[str, Entry]:
        if kind in TREES:
            self.block(kind, "", "")
            if kind in ("encoder_layer", "decoder_layer", "model"):
                RESOLVE.structure_norms(self)       # a model's: layer by layer
            RESOLVE.wrapper(self, kind)
            if kind == "model":
                RESOLVE.vocab_tables(self)
        else:  # a single leaf block at the top: linear / norm / embedding
            for leaf, _, _ in LEAVES[kind]:
                self._apply_map(leaf)
            self.leaf_block(kind, "", "", None, "")
            RESOLVE.wrapper(self, kind)    # one library norm held under one attribute
        # explicit full-name maps the walk did not visit
        for ref in self.ref_shapes:
            if ref not in self.entries:
                self._apply_map(ref)
        return self.entries


def resolve(kind: str, space: Space, ref_shapes: dict[str, tuple], hyper: dict[str, Any], *,
            name_map: dict[str, str] | None = None, layout: str = "out_in",
            optional: Callable[[str, dict], Any] = lambda r, e: False,
            hints: dict | None = None,
            class_layout: dict | None = None) -> tuple[dict[str, Entry], list[str]]:
    """Map every reference parameter to the candidate; returns (entries, unclaimed candidate names).

    Raises InterfaceError naming the reference parameters that stayed unmapped, except those
    `optional(ref, entries)` knows the candidate has none of (it returns the reason, a str).
    """
    unknown = [k for k in (name_map or {}) if k not in ref_shapes
               and not any(r.startswith(k + ".") for r in ref_shapes)]
    if unknown:
        raise InterfaceError(f"--map: unknown reference name(s) {unknown}; reference parameters are: "
                             f"{', '.join(ref_shapes)}")
    r = Resolver(space, ref_shapes, hyper, name_map, layout, hints)
    entries = r.run(kind)
    RESOLVE.class_layout(entries, space, ref_shapes, class_layout)
    missing = []
    for ref in ref_shapes:
        if ref in entries:
            continue
        why = optional(ref, entries)
        if why:
            entries[ref] = Entry(ref, None, how="absent", why=why if isinstance(why, str) else "")
        else:
            missing.append(ref)
    unclaimed = [n for n in space.names if n not in r.claimed]
    unused = map_entries.unused_block_maps(name_map, ref_shapes, entries)
    if unused:
        raise InterfaceError(f"--map {', '.join(unused)}: maps nothing (no candidate parameter "
                             f"under that name was placed there); candidate parameters: "
                             f"{', '.join(space.names[:40])}")
    if missing:
        weightless = RESOLVE.weightless_message(kind, space, missing, ref_shapes) or \
            RESOLVE.affine_free_message(kind, space, missing, ref_shapes)
        if weightless:
            raise InterfaceError(weightless)
        why = RESOLVE.unclaimed_message(kind, unclaimed, space.shapes) or \
            RESOLVE.gated_missing(kind, space, missing, ref_shapes)
        if why:
            raise InterfaceError(why)
        listing = ", ".join(f"{n} {tuple(space.shapes[n] or ('argument',))}"
                            for n in space.names[:60])
        raise InterfaceError(
            (RESOLVE.shared_norm_message(kind, space, missing, ref_shapes)
             or RESOLVE.encoder_only_message(kind, space, missing, ref_shapes) or "")
            + "cannot tell where the candidate keeps "
            + ", ".join(f"{m} {tuple(ref_shapes[m])}" for m in missing)
            + f". Candidate parameters: {listing or '(none)'}. Name them with --map REF=CAND "
              "(e.g. --map q_proj.weight=attn.Wq.weight; append .T for a transposed matrix), or "
              "--map REF=- where the candidate really has none.")
    # entries in reference order
    return {k: entries[k] for k in ref_shapes}, unclaimed

