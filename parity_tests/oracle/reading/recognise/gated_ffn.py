"""Recogniser: a gated feed-forward (GLU family: SwiGLU `w2(silu(w1 x) * w3 x)`, GEGLU, a GELU-gated
unit): a third projection, as wide as the up-projection, multiplied into the hidden activation, or
both up-projections packed in one (2F, D) matrix. It is not the paper's position-wise feed-forward
(two Linears around an activation), so no mapping of the reference's weights can make it one: the
check stops with an interface error that names the cause, instead of the generic "no counterpart" or
"cannot tell where" text that blames one weight.

Found by shapes alone (nothing runs), among the matrices a forward reads:
  unclaimed  a left-over non-square matrix (F, D) with exactly one other matrix of the same shape
             beside it and one of the transposed shape (D, F): two up-projections and a
             down-projection; at F = D (the smallest example) only for the ffn component itself,
             holding exactly three matrices of one shape (in a layer, square matrices are the
             attention's too). Left out: arrays inside an attention sub-object (`mha.W_q` ...
             `mha.W_o` with every head d_model wide: (h*D, D) three times, then (D, h*D), which is
             no gate). Arrays a NumPy object's forward never reads (optimizer state such as
             `moment_p`, `rmsprop_p` of its weight's shape) are no parameters at all
             (reading/forward_reads.py) and never reach it;
  missing    a reference matrix left unplaced while the candidate holds a (2F, D) matrix (or
             (D, 2F)), F x D the reference's up-projection (linear1), and a down-projection
             ((D, F) or (F, D)): the two up-projections packed in one (in a layer only at F != D,
             where (2D, D) may be a cross-attention's packed k|v).
"""
from __future__ import annotations

from ..trees import ATTN_CROSS, ATTN_SELF, MASKED_SELF

KINDS = ("ffn", "encoder_layer", "decoder_layer")
ATTENTION = frozenset(n.lower() for n in ATTN_SELF + ATTN_CROSS + MASKED_SELF if n)


def _text(kind: str, what: str) -> str:
    return (f"the candidate is a gated feed-forward (GLU / SwiGLU / GEGLU: {what}): a second "
            f"up-projection multiplied into the hidden activation. The {kind} component's "
            f"feed-forward is the paper's, two Linears around an activation (linear1, "
            f"linear2), so a gated unit is a different component and cannot be compared with it")


def _matrices(shapes: dict) -> dict:
    return {n: tuple(s) for n, s in shapes.items() if s is not None and len(tuple(s)) == 2}


def in_attention(name: str) -> bool:
    """A parameter of an attention sub-object (`mha.W_q.weight`, `layer.self_attn.w_q`)."""
    return any(p.lower() in ATTENTION or "attn" in p.lower() or "attention" in p.lower()
               for p in name.split(".")[:-1])


def unclaimed(kind: str, left: list, shapes: dict) -> str | None:
    """The interface error for left-over parameters that are a gate, or None."""
    if kind not in KINDS:
        return None
    mats = {n: s for n, s in _matrices(shapes).items() if not in_attention(n)}
    for n in left:
        s = mats.get(n)
        if s is None or (s[0] == s[1] and (kind != "ffn" or len(mats) != 3
                                           or len(set(mats.values())) != 1)):
            continue
        twins = [m for m, t in mats.items() if t == s and m != n]
        if s[0] == s[1]:
            return _text(kind, f"three {s} matrices ({', '.join(mats)}) where the paper's "
                               f"feed-forward has two; {n} has no counterpart")
        downs = [m for m, t in mats.items() if t == (s[1], s[0])]
        if len(twins) == 1 and downs:
            return _text(kind, f"{n} {s} beside {twins[0]} {s}, both feeding {downs[0]} "
                               f"{(s[1], s[0])}")
    return None


def missing(kind: str, space, absent: list, ref_shapes: dict) -> str | None:
    """The interface error for unplaced reference weights beside a packed (2F, D) pair of
    up-projections, or None."""
    if kind not in KINDS:
        return None
    mats = _matrices(space.shapes)
    ups = [tuple(s) for r, s in ref_shapes.items() if r.endswith("linear1.weight") and len(tuple(s)) == 2]
    if not absent or len(ups) != 1:
        return None
    F, D = ups[0]
    if F == D and kind != "ffn":
        return None                     # in a layer, a (2D, D) matrix may be an attention's k|v
    packed = [m for m, t in mats.items() if t in ((2 * F, D), (D, 2 * F))]
    downs = [m for m, t in mats.items() if t in ((D, F), (F, D))]
    if not packed or not downs:
        return None
    return _text(kind, f"{packed[0]} {mats[packed[0]]} holds two up-projections of width {F}, one "
                       f"gating the other, then {downs[0]} {mats[downs[0]]}")
