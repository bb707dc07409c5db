"""Recogniser: the required fields of a config dataclass that name no drawn hyperparameter. A
translation model's config (`TransformerConfig(src_vocab_size, target_vocab_size, src_seq_length,
target_seq_length, src_pad_token_id, target_pad_token_id, d_model=512, ...)`) is handed to every
layer, which reads only its widths; the dataclass still refuses to be built without the others.
Each such field gets a value by what its name means: a vocabulary size the drawn one of its side
(source, target, or the shared one), else UNUSED_VOCAB; a padding id the drawn one of its side,
else 0; a layer count the drawn one of its stack, else 1 (a single layer never reads it: nanoGPT's
`n_layer` scales only the model's initial weights); a head count the drawn one, else 1 (a
feed-forward never reads it, and 1 divides every width a config may check); a sequence length, a
dropout, an eps or a bias switch as configs.default_for gives them. A field whose name says
nothing stays out, and the build's TypeError names it as before."""
from __future__ import annotations

import dataclasses
import re

from .base import MISSING

UNUSED_VOCAB = 16
"""A vocabulary size for a config field the component being checked never draws (a layer's)."""
UNDRAWN_COUNT = 1
"""A layer or head count for a config field the component being checked never draws (a layer's
layers, a feed-forward's heads)."""

TARGET_WORDS = ("tgt", "trg", "target", "dec", "decoder", "output", "out")
SOURCE_WORDS = ("src", "source", "enc", "encoder", "input", "in")
PAD_WORDS = ("id", "idx", "index", "token")


def _words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return [w for w in spaced.lower().split("_") if w]


def _side(words: list[str]) -> str:
    if any(w in TARGET_WORDS for w in words):
        return "target"
    return "source" if any(w in SOURCE_WORDS for w in words) else ""


def meaning_value(name: str, values: dict):
    """A value for config field `name` by its words (see the module's text), or MISSING."""
    from ..signatures import HYPER_ALIASES, names_hyper
    from .configs import default_for
    words = _words(name)
    side = _side(words)
    if any(w in ("vocab", "vocabulary", "ntoken", "ntokens") for w in words) or \
            any(w.endswith("vocab") for w in words):
        keys = {"target": ("tgt_vocab", "vocab_size", "src_vocab"),
                "source": ("src_vocab", "vocab_size", "tgt_vocab")}.get(
                    side, ("vocab_size", "src_vocab", "tgt_vocab"))
        return next((values[k] for k in keys if k in values), UNUSED_VOCAB)
    fused = any(w.startswith("pad") and w[3:] in PAD_WORDS for w in words)     # `padidx`
    if fused or any(w in ("pad", "padding") for w in words):
        if len(words) > 1 and not fused and not any(w in PAD_WORDS for w in words):
            return MISSING                        # `pad_mode`, `padding_side`: not an id
        keys = ("tgt_pad_id", "pad_id") if side == "target" else ("pad_id",)
        return next((values[k] for k in keys if k in values), 0)
    stack = layer_stack(name)
    if stack is not None:
        keys = (f"num_{stack}_layers", "num_layers") if stack else ("num_layers",)
        return next((values[k] for k in keys if k in values), UNDRAWN_COUNT)
    if "num_heads" not in values and (name in HYPER_ALIASES["num_heads"] or
                                      names_hyper("num_heads", name)):
        return UNDRAWN_COUNT
    return default_for(name, values)


def layer_stack(name: str) -> str | None:
    """"encoder" / "decoder" where `name` counts one stack's layers, "" where it counts layers
    (an alias of num_layers, or a count word with a layer word), None where it is no layer count."""
    from ..signatures import HYPER_ALIASES, names_hyper
    for stack in ("encoder", "decoder"):
        hyper = f"num_{stack}_layers"
        if name in HYPER_ALIASES[hyper] or names_hyper(hyper, name):
            return stack
    if name in HYPER_ALIASES["num_layers"] or names_hyper("num_layers", name):
        return ""
    return None


def required(cls, kwargs: dict, values: dict) -> dict:
    """{field: value} for each init field of dataclass `cls` without a default that `kwargs` does
    not fill and whose name means something (meaning_value)."""
    out = {}
    for f in dataclasses.fields(cls):
        if not f.init or f.name in kwargs or f.default is not dataclasses.MISSING or \
                f.default_factory is not dataclasses.MISSING:
            continue
        v = meaning_value(f.name, values)
        if v is not MISSING:
            out[f.name] = v
    return out
