"""Recogniser: required constructor arguments filled by what their name means, never by position
with the wrong quantity (nanoGPT's `LayerNorm(ndim, bias)` was handed eps for `bias`; a size went
into a `dropout_probability`):

    dropout    any name holding `drop` (dropout_probability, attn_drop, p_dropout) = 0.0
    epsilon    names ending in eps / epsilon (norm_epsilon, ln_eps) = the drawn eps
    bias       bias, use_bias, qkv_bias, *_bias = True (the reference has biases)
    cache      cache, kv_cache, past, layer_past, past_key_values = None

Only REQUIRED arguments no hyperparameter name matched; each guess is a note in the report.
"""
from __future__ import annotations

from .base import MISSING

CACHE = ("cache", "kv_cache", "past", "layer_past", "past_key_value", "past_key_values",
         "memory_cache", "layer_cache")


def kind(name: str) -> str | None:
    n = name.lower()
    if "drop" in n:
        return "dropout"
    if n.endswith(("eps", "epsilon")):
        return "eps"
    if n in ("bias", "use_bias", "add_bias", "with_bias", "has_bias") or n.endswith("_bias"):
        return "bias"
    if n in CACHE:
        return "cache"
    return None


def value(ctx, param, values: dict):
    k = kind(param.name)
    if k is None:
        return MISSING
    v = {"dropout": 0.0, "eps": values.get("eps", 1e-5), "bias": True, "cache": None}[k]
    ctx.note(f"constructor argument {param.name!r}: passed {v!r} (a {k} argument, by its name)")
    return v
