"""Recogniser: attention whose every head is as wide as the model (`nn.Linear(d_model, heads *
d_model)` for the query, key and value, `nn.Linear(heads * d_model, d_model)` out, the scale
1/sqrt(d_model)). The paper's heads split d_model between them (d_head = d_model / heads), so no
mapping of the reference's (d_model, d_model) projections fits: the check stops with an interface
error that says so, instead of "cannot tell where self_attn.q_proj.weight" alone.

Found by shapes alone (nothing runs): three left-over (k*D, D) matrices, k > 1, in one attention
sub-object (its name one of the attention names of trees.py, or holding attn / attention), beside a
(D, k*D) one there.
"""
from __future__ import annotations

from .gated_ffn import in_attention

KINDS = ("mha", "encoder_layer", "decoder_layer")


def message(kind: str, left: list, shapes: dict) -> str | None:
    """The interface error for left-over attention projections k heads * d_model wide, or None."""
    if kind not in KINDS:
        return None
    mats = {n: tuple(s) for n, s in shapes.items() if s is not None and len(tuple(s)) == 2
            and (kind == "mha" or in_attention(n))}
    for n in left:
        s = mats.get(n)
        if s is None or s[0] <= s[1] or s[0] % s[1]:
            continue
        owner = n.rsplit(".", 2)[0] if n.count(".") >= 2 else ""
        same = [m for m, t in mats.items() if t == s and m.startswith(owner)]
        out = [m for m, t in mats.items() if t == (s[1], s[0]) and m.startswith(owner)]
        if len(same) == 3 and out:
            k, D = s[0] // s[1], s[1]
            return (f"the candidate's attention gives every head the whole model width: "
                    f"{', '.join(same)} are {s} = ({k} heads x d_model {D}, d_model) and {out[0]} "
                    f"{(s[1], s[0])}, where the paper's heads split d_model between them (the "
                    f"reference's projections are ({D}, {D}), its heads d_model / heads wide). That is a "
                    f"different attention and cannot be compared with the {kind} component's")
    return None
