"""Recogniser: a packed q|k|v projection under a name no table holds (`qkv_layer`, `joint_proj`),
found by its shape.

After the names and the packed-name table found nothing for q, k and v, the attention block's
free (unclaimed) matrices are looked at: when exactly one of them is (3*D, D) or (D, 3*D), with
D the model width, it is read as q | k | v stacked (rows 0:D, D:2D, 2D:3D of its (out, in) view;
a (D, 3*D) matrix is used as x @ W, so transposed). Its bias is the (3*D,) vector beside it
(`<module>.bias`), or the only free (3*D,) vector of the block. Two or more such matrices (a
feed-forward whose drawn width is 3*D next to it) are ambiguous: nothing is taken, and the
mapping stops as an interface error naming the parameters as before.

Whether the rows are the plain thirds or grouped by head is then decided by the qkv_groups probe,
as for a packed projection found by name. The mapping line says the matrix was found by shape.
"""
from __future__ import annotations

from ..resolution import Entry

QKV = ("q_proj", "k_proj", "v_proj")
WHY = "found by its shape (3*d_model x d_model): no name matched"


def resolve(r, ref_prefix: str, cand_prefix: str) -> bool:
    """Place q|k|v on the block's one free (3D, D) / (D, 3D) matrix; True when placed."""
    names = [r.join(ref_prefix, f"{p}.weight") for p in QKV]
    if not all(n in r.ref_shapes for n in names) or any(n in r.entries for n in names):
        return False
    D = int(r.ref_shapes[names[0]][0])
    if tuple(r.ref_shapes[names[0]]) != (D, D) or D < 1:
        return False
    free = r.free_names(cand_prefix)
    hits = [n for n in free if r.space.shapes.get(n) is not None
            and tuple(r.space.shapes[n]) in ((3 * D, D), (D, 3 * D))]
    if len(hits) != 1:
        return False
    cw = hits[0]
    transpose = tuple(r.space.shapes[cw]) == (D, 3 * D)
    for j, p in enumerate(QKV):
        ref = r.join(ref_prefix, f"{p}.weight")
        r.entries[ref] = Entry(ref, cw, transpose, (j * D, (j + 1) * D), "packed", why=WHY)
    r.claimed.add(cw)
    cb = packed_bias(r, cw, cand_prefix, 3 * D)
    if cb is not None:
        for j, p in enumerate(QKV):
            bref = r.join(ref_prefix, f"{p}.bias")
            if bref in r.ref_shapes:
                r.entries[bref] = Entry(bref, cb, False, (j * D, (j + 1) * D), "packed", why=WHY)
        r.claimed.add(cb)
    return True


def packed_bias(r, cw: str, cand_prefix: str, width: int) -> str | None:
    """The free (width,) vector beside the packed matrix `cw` (its own `.bias`), or the only free
    one of that width under `cand_prefix`; None when there is none or more than one."""
    def fits(n: str) -> bool:
        s = r.space.shapes.get(n)
        return n not in r.claimed and s is not None and tuple(s) == (width,)
    if "." in cw:
        beside = r.space.find(cw.rsplit(".", 1)[0] + ".bias")
        if beside and fits(beside):
            return beside
    vectors = [n for n in r.free_names(cand_prefix) if fits(n)]
    return vectors[0] if len(vectors) == 1 else None
