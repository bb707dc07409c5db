"""Recogniser: a layer that holds an attention's q, k and v projections itself (`W_q`, `W_k`, `W_v`;
in a decoder layer numbered `W_q_1` ... `W_v_2`, flat_roles' names) and hands the projected q, k, v
to an attention module holding only the output projection (`self.mha = MultiHeadAttention(d, h)`
with `W_0` inside, called as `self.mha(self.W_q(x), self.W_k(x), self.W_v(x), mask)`).

Once flat_roles has found the q, k and v projections at the layer's own level, the output
projection is looked for in the layer's sub-modules: one whose weights all sit in a single module
named as an output projection (`W_0`, `out_proj`, `fc_out`, ...). In a decoder layer that
sub-module must carry the attention's number or role word (`mha_layer_1`, `self_mha`); in a layer
with one attention it must be the only such sub-module. Nothing is placed otherwise. Every weight
placed so is still compared with the reference, and the mapping line says where it was found."""
from __future__ import annotations

WHY = "the output projection of an attention module handed q, k, v projected by the layer"


def _role(child: str, words: tuple[str, ...], digit: str) -> int:
    """2 where the sub-module carries the attention's number, 1 where a role word, else 0."""
    low = child.lower().rstrip("_")
    if digit and low.endswith(digit) and not low[-2:-1].isdigit():
        return 2
    return int(any(low.startswith(w + "_") or low.endswith("_" + w) for w in words))


def out_projection(r, ref: str, proj, cand_prefix: str, words: tuple[str, ...], alone: bool,
                   digit: str) -> bool:
    """Place the block's output projection `ref` (see the module docstring); True when placed."""
    base = (cand_prefix + ".") if cand_prefix else ""
    held: dict[str, list[str]] = {}
    for n in r.space.names:
        rel = n[len(base):] if n.startswith(base) else None
        if rel is not None and rel.count(".") >= 2:
            held.setdefault(rel.split(".")[0], []).append(n)
    aliases = {a.lower() for a in proj.aliases}
    fits: dict[int, list[str]] = {}
    for child, names in held.items():
        owners = {n.rsplit(".", 1)[0] for n in names}
        if len(owners) != 1 or any(n in r.claimed for n in names):
            continue
        owner = owners.pop()
        if owner.rsplit(".", 1)[-1].lower() in aliases:
            fits.setdefault(2 if alone else _role(child, words, digit), []).append(owner)
    fits = fits.get(2) or fits.get(1) or []      # a number says more than a role word
    if len(fits) != 1 or not r.leaf_block("linear", ref, fits[0], proj, cand_prefix):
        return False
    for k in (ref + ".weight", ref + ".bias"):
        if k in r.entries:
            r.entries[k].why = WHY
    return True
