"""Recogniser: a block holding one LayerNorm where the component has one per sublayer (GPT-style
NumPy code that writes `x + attn(layer_norm(x, self.ln_g, self.ln_b))` and then
`x + mlp(layer_norm(x, self.ln_g, self.ln_b))`). The oracle cannot place one norm's gain and shift
twice, so the check stops with an interface error as before (the verdict stands: the paper gives
each sublayer a norm of its own); this adds the likely cause to the generic "cannot tell where"
message, which only asked for --map: the candidate's norms are counted by their names (a norm word,
`ln`, `norm`, `layernorm`, in a path segment or before a gain/shift suffix) among its vectors of the
model width."""
from __future__ import annotations

import re

NORM_WORDS = ("ln", "norm", "layernorm", "lnorm")
SUFFIX = re.compile(r"^(.*?)_?(g|b|gamma|beta|weight|bias|scale|shift|gain)$")
BLOCKS = {"encoder_layer": "an encoder layer", "decoder_layer": "a decoder layer"}


def _normish(segment: str) -> bool:
    return any(t in NORM_WORDS for t in re.split(r"[_\d]+", segment.lower()) if t)


def norm_of(name: str) -> str | None:
    """Which norm a parameter name belongs to ('norm1.weight' -> 'norm1', 'ln_g' -> 'ln',
    'blocks.0.ln_1.g' -> 'blocks.0.ln_1'), or None where its name names no norm."""
    *head, last = name.split(".")
    if head and _normish(head[-1]):
        return ".".join(head)
    m = SUFFIX.match(last.lower())
    if m and (_normish(m.group(1)) or (not m.group(1) and m.group(2) in ("gamma", "beta"))):
        return ".".join(head + [m.group(1)])
    return None


def message(kind: str, space, missing: list, ref_shapes: dict) -> str | None:
    """The likely cause to put before the generic message, or None: the candidate has one norm
    (of the model width) where the component's missing parameters include norms it has more of."""
    if kind not in BLOCKS:
        return None
    ref_norms = sorted({n for r in ref_shapes if (n := norm_of(r)) is not None})
    if len(ref_norms) < 2 or not any(norm_of(m) in ref_norms for m in missing):
        return None
    widths = {tuple(ref_shapes[r]) for r in ref_shapes if norm_of(r) is not None}
    held: dict[str, list[str]] = {}
    for n in space.names:
        if tuple(space.shapes.get(n) or ()) in widths and (k := norm_of(n)) is not None:
            held.setdefault(k, []).append(n)
    if len(held) != 1:
        return None
    names = ", ".join(next(iter(held.values())))
    return (f"the candidate holds one layer norm ({names}) where {BLOCKS[kind]} has "
            f"{len(ref_norms)} ({', '.join(ref_norms)}), one per sublayer: one norm shared by "
            f"every sublayer is the likely cause (the paper gives each sublayer its own; the "
            f"verdict stands). ")
