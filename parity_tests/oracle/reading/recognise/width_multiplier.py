"""Recogniser: a REQUIRED constructor argument giving the feed-forward's hidden width as a multiple
of the model width (`forward_expansion`, `expansion_factor`, `mlp_ratio`, `ff_mult`):
`Linear(d, forward_expansion * d)`. Passed d_ff / d_model when the drawn d_ff is a whole multiple
of d_model, else 4. The ffn_width probe then sees a hidden width that d_ff does not change, k *
d_model at two model widths, and draws d_ff as k * d_model from there on, so the argument is the
drawn width's multiplier on every example (and --set d_ff=k*d_model is honoured). The report says
so. An argument with a default keeps it (ffn_width reads the width it gives)."""
from __future__ import annotations

from .base import MISSING

NAMES = ("forward_expansion", "expansion_factor", "expansion", "expansion_ratio", "mlp_ratio",
         "mlp_mult", "ff_mult", "ffn_mult", "ff_ratio", "ffn_ratio", "ffn_expansion", "ff_expansion",
         "hidden_ratio", "hidden_mult", "widening_factor", "width_mult", "width_multiplier",
         "ffn_factor", "ff_factor", "mlp_expansion", "feedforward_expansion")
DEFAULT = 4


def _expansion_words(name: str) -> bool:
    """A multiplier in words no list holds (`layerExpansion`, `ffn_expansion_rate`): the word
    `expansion` and no width or count word."""
    from ..name_words import MODEL_WIDTH_WORDS, snake
    words = [w for w in snake(name).split("_") if w]
    return "expansion" in words and not any(w in MODEL_WIDTH_WORDS or w in ("n", "num") for w in words)


def value(ctx, param, values: dict):
    """The multiplier for a required width-multiplier argument, or MISSING."""
    if param.name.lower() not in NAMES and not _expansion_words(param.name):
        return MISSING
    d, f = int(values.get("d_model", 0) or 0), int(values.get("d_ff", 0) or 0)
    k = f // d if d > 0 and f >= d and f % d == 0 else DEFAULT
    ctx.note(f"constructor argument {param.name!r}: a feed-forward width multiplier; passed {k} "
             f"(d_ff = {k} x d_model)")
    return k
