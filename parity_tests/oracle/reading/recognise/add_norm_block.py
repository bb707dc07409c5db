"""Recogniser: an attention or feed-forward block that normalises itself (its forward returns
LayerNorm(x + Sublayer(x)), or applies the sublayer to LayerNorm(x), a pre-norm block). Checked as
`mha` or `ffn` it computes more than the component; when reference parameters stay unplaced beside
a norm the reference's block has no counterpart for, the norm is the reason to give (not the
reference's biases the candidate may also lack): the interface error names the norm and points to
`encoder_layer`, where such a block is one sublayer.
"""
from __future__ import annotations

KINDS = ("mha", "ffn")


def _is_norm(name: str) -> bool:
    for tok in name.lower().split(".")[:-1] or [name.lower()]:
        if "norm" in tok or tok in ("ln", "ln1", "ln2", "ln_1", "ln_2", "lnorm"):
            return True
    return False


def message(kind: str, unclaimed: list[str], shapes: dict) -> str | None:
    """The interface error for a block with a norm inside, or None when it is not one."""
    if kind not in KINDS:
        return None
    norms = [n for n in unclaimed if _is_norm(n)]
    if not norms:
        return None
    what = ", ".join(f"{n} {tuple(shapes.get(n) or ())}" for n in norms)
    layer = "the self-attention sublayer" if kind == "mha" else "the feed-forward sublayer"
    return (f"the candidate keeps a LayerNorm inside the block ({what}): it normalises itself, "
            f"after the sublayer (Add & Norm, LayerNorm(x + Sublayer(x))) or before it (pre-norm, "
            f"Sublayer(LayerNorm(x))), which is more than the {kind} component. Check it as part "
            f"of encoder_layer (or decoder_layer), where it is {layer} with its norm (pre-norm: "
            f"--set norm_first=true); or check the layer class that uses it.")
