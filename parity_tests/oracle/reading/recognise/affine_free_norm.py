"""Recogniser: a LayerNorm that seems to have no gain and shift (elementwise_affine=False, as NumPy
code often writes it: `(x - mean) / sqrt(var + eps)` and nothing more). The oracle never decides a
norm's gain or shift is absent (recognise/absent: left where it does not look, they would be held at
1 and 0 and hide bugs), so the check stops with an interface error; this one says what was found
instead of the generic "cannot tell where": none of the candidate's arrays could be the gain or the
shift (a vector of the model width, unit axes aside), the arrays a NumPy forward made (values kept
for the backward, which the generic message listed as "candidate parameters") named as such, and
how to go on: `--map weight=- --map bias=-` when the norm really has none (the reference then holds
them at 1 and 0, and the report says they were not compared), or `--map weight=CAND`.
"""
from __future__ import annotations

from .row_bias import unit_axes_shape

GAIN_SHIFT = {"weight": "gain", "bias": "shift"}


def message(kind: str, space, missing: list, ref_shapes: dict) -> str | None:
    """The interface error's text for a LayerNorm none of whose arrays can be its gain or shift,
    or None."""
    if kind != "norm" or not missing or not set(missing) <= set(GAIN_SHIFT):
        return None
    made = bool(getattr(space, "made_by_forward", False))
    held = [] if made else list(space.names)

    def could_be(n, ref):
        s = space.shapes.get(n)
        return s is not None and (tuple(s) == tuple(ref_shapes[ref])
                                  or unit_axes_shape(ref_shapes[ref], s) is not None)
    if any(could_be(n, ref) for n in held for ref in missing):
        return None                      # an array that could be it: the generic message names it
    what = " and ".join(f"{GAIN_SHIFT[m]} {m} {tuple(ref_shapes[m])}" for m in missing)
    listing = ", ".join(f"{n} {tuple(space.shapes[n] or ('argument',))}" for n in space.names[:20])
    found = (f"the arrays it holds were made by its forward (values kept for the backward, not "
             f"parameters: {listing})" if made and listing else
             f"its arrays ({listing}) have no shape a gain or shift could have" if listing else
             "it holds no arrays")
    maps = " ".join(f"--map {m}=-" for m in missing)
    return (f"no LayerNorm {what} found in the candidate: {found}. If it really has none (a "
            f"LayerNorm without elementwise affine), check again with {maps}: the reference then "
            f"holds them at 1 and 0, and they are not compared; if it keeps them where the oracle "
            f"does not look, name them with --map {missing[0]}=CAND")
