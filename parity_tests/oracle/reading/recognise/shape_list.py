"""Recogniser: a norm built from a list or tuple of the normalised dimensions,
`LayerNormalization(parameters_shape=[d_model])`, as nn.LayerNorm's `normalized_shape` is written.

A required argument of a norm (the component checked is `layernorm`, or the class built is named
like a norm) that no hyperparameter name matched gets `[d_model]` instead of d_model when either
its annotation is a sequence type (list, tuple, Sequence, Size, Iterable) or its name says it
holds a shape or several dimensions (`*shape*`, `*dims`, `*dimensions`, `*sizes`). The int would
fail at `torch.ones(*dims)` or at `len(dims)` in the forward; the list normalises the last axis,
which is what the component is. Said in the notes.
"""
from __future__ import annotations

import inspect

from .base import MISSING

SEQ_TYPES = ("list", "tuple", "sequence", "size", "iterable")
PLURAL_ENDS = ("dims", "dimensions", "sizes", "shapes")


def _is_norm(ctx) -> bool:
    return ctx.component == "layernorm" or "norm" in (ctx.target_name or "").lower()


def _sequence_annotation(param) -> bool:
    ann = param.annotation
    if ann is inspect.Parameter.empty:
        return False
    text = ann if isinstance(ann, str) else getattr(ann, "__name__", None) or repr(ann)
    head = str(text).lower().replace("typing.", "").split("[", 1)[0].strip()
    return head.rsplit(".", 1)[-1] in SEQ_TYPES


def _shape_name(name: str) -> bool:
    low = name.lower()
    return "shape" in low or low.endswith(PLURAL_ENDS)


def value(ctx, param, values: dict):
    """[d_model] for a norm's list-of-dimensions argument, or MISSING."""
    if "d_model" not in values or not _is_norm(ctx):
        return MISSING
    if not (_sequence_annotation(param) or _shape_name(param.name)):
        return MISSING
    d = int(values["d_model"])
    ctx.note(f"constructor argument {param.name!r}: passed [d_model] = [{d}] (a list of the "
             f"normalised dimensions: the last axis)")
    return [d]
