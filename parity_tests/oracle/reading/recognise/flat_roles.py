"""Recogniser: a layer's attention projections kept at the layer's own level, each named for its
role and its projection (`self_q`, `cross_k`, `W_q_self`, `enc_dec_Wv`, `q_proj_cross`), or, in a
decoder layer, numbered in the paper's order (`w_q1` self, `w_q2` cross), with no attention
sub-module to hold them. For an unresolved self- or cross-attention block, a name that
starts or ends with a word naming that role (`self`, `sa`, `masked`, `self_attn`, ...; `cross`,
`src`, `enc`, `enc_dec`, `memory`, `cross_attn`, ...) and whose remainder names a projection (the
same names a block's own children take: `q`, `W_q`, `query`, `out_proj`, ...) is taken as that
projection: a Linear module by its weight and bias, a bare matrix with the bias named the same way
(`b_q_self`). The block is placed only when every projection is found this way; otherwise nothing
is kept. The mapping line says so, and every weight is still compared with the reference, so a
name read wrong ends in a mismatch with that line to check, never in a match."""
from __future__ import annotations

from ..trees import ATTN_CROSS, ATTN_SELF, TREES
from .split_out import WHY, out_projection

ROLES = {
    "self_attn": tuple(ATTN_SELF) + ("self", "sa", "slf", "masked", "selfattn", "self_attention"),
    "cross_attn": tuple(a for a in ATTN_CROSS if a != "multihead_attn")
    + ("cross", "ca", "src", "enc", "enc_dec", "encdec", "encoder", "mem", "memory", "ctx", "context"),
}


NUMBERED = {"self_attn": "1", "cross_attn": "2"}
"""A decoder layer's two attentions numbered in the paper's order, the digit ending the name
(`w_q1`, `Wk2`, `w_o_2`): the self-attention first, the cross-attention second."""


def _rest(name: str, words: tuple[str, ...], alone: bool = False, digit: str = "") -> list[str]:
    """What is left of `name` once a role word is cut from its start or end (`self_q` -> `q`),
    or the attention's number from its end (`w_q1` -> `w_q`, where `digit`); the name itself too
    where the layer has this one attention only (`alone`)."""
    low, out = name.lower(), ([name] if alone else [])
    if digit and low.endswith(digit) and len(name) > 1 and not low[-2:-1].isdigit():
        out.append(name[:-1].rstrip("_"))
    for w in words:
        if low.startswith(w + "_") and len(name) > len(w) + 1:
            out.append(name[len(w) + 1:])
        if low.endswith("_" + w) and len(name) > len(w) + 1:
            out.append(name[: -len(w) - 1])
    return out


def _top_level(r, cand_prefix: str) -> tuple[list[str], list[str]]:
    """Unclaimed modules holding a weight, and bare arrays, directly under cand_prefix."""
    base = (cand_prefix + ".") if cand_prefix else ""
    modules, bare = [], []
    for n in r.space.names:
        if n in r.claimed or not n.startswith(base):
            continue
        rel = n[len(base):]
        if "." not in rel:
            bare.append(rel)
        elif rel.count(".") == 1 and rel.split(".")[0] not in modules:
            modules.append(rel.split(".")[0])
    return modules, bare


def block(r, child, ref_child: str, cand_prefix: str) -> bool:
    """Place an unresolved self/cross attention at role-named projections of the layer itself."""
    words = ROLES.get(child.ref)
    if child.kind != "mha" or not words:
        return False
    modules, bare = _top_level(r, cand_prefix)
    layer = ref_child.rsplit(".", 1)[0] + "." if "." in ref_child else ""     # in a model: its layer
    alone = child.ref == "self_attn" and not any(k.startswith(layer + "cross_attn.") for k in r.ref_shapes)
    digit = "" if alone else NUMBERED.get(child.ref, "")
    snap = (dict(r.entries), set(r.claimed))
    for proj in TREES["mha"]:
        ref = r.join(ref_child, proj.ref)
        wref, bref = ref + ".weight", ref + ".bias"
        if wref not in r.ref_shapes or wref in r.entries:
            continue
        found = False
        for m in modules:
            if any(rest.lower() in {a.lower() for a in proj.aliases} for rest in _rest(m, words, alone, digit)) and \
                    (r.leaf_block("linear", ref, r.join(cand_prefix, m), proj, cand_prefix)
                     or _one_matrix(r, ref, r.join(cand_prefix, m))):
                found = True
                break
        for b in ([] if found else bare):
            if not any(rest.lower() in {a.lower() for a in proj.raw_weight} for rest in _rest(b, words, alone, digit)):
                continue
            if not r.take(wref, r.join(cand_prefix, b)):
                continue
            found = True
            for v in bare:
                if bref in r.ref_shapes and bref not in r.entries and \
                        any(rest.lower() in {a.lower() for a in proj.raw_bias}
                            for rest in _rest(v, words, alone, digit)):
                    r.take(bref, r.join(cand_prefix, v))
            break
        if not found and proj.ref == "out_proj":
            found = out_projection(r, ref, proj, cand_prefix, words, alone, digit)
        if not found:
            r.entries, r.claimed = snap
            return False
    for ref in set(r.entries) - set(snap[0]):
        e = r.entries[ref]
        if e.why != WHY:
            e.why = (e.why + "; " if e.why else "") + "a projection named for its role at the layer's own level"
    return True


def _one_matrix(r, ref: str, module: str) -> bool:
    """A Linear-like object whose leaves have names of its own (`q.params`, `q.bias_params`): its
    one matrix is the weight, and its one vector the bias."""
    held = [n for n in r.space.names if n.startswith(module + ".") and "." not in n[len(module) + 1:]]
    mats = [n for n in held if len(r.space.shapes[n] or ()) == 2]
    vecs = [n for n in held if len(r.space.shapes[n] or ()) == 1]
    if len(mats) != 1 or len(vecs) > 1 or not r.take(ref + ".weight", mats[0]):
        return False
    if vecs and ref + ".bias" in r.ref_shapes:
        r.take(ref + ".bias", vecs[0])
    return True
