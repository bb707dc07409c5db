"""The checks of TransformerConfig's fields, kept apart from the settings a learner reads.

Importing this file (`import npformer` does, first of all the guards) makes TransformerConfig check
itself: a field name that is not a field is a TypeError naming the closest field (`dmodel` -> did you
mean 'd_model'), `from_dict` refuses unknown keys with a ValueError, and every built config (also by
`replace` and `from_dict`) has each field checked after its dtype is normalised, with an error that
names the field, what was expected and what came.

This file imports nothing but npformer.models.config and the standard library: the grading oracle's
sandbox keeps the config (and so these checks) importable after it removes every other npformer
module.
"""
from __future__ import annotations

import dataclasses
import difflib
import functools
import numbers
from collections.abc import Mapping
from typing import Any

from npformer.models.config import ACTIVATIONS, DTYPES, POOLINGS, POSITIONALS, TransformerConfig


def refuse_unknown_fields(cls: type, given, where: str, error: type[Exception]) -> None:
    """Raise `error` naming the first key of `given` that is not a field of `cls`, with the
    closest field name when one is close (`dmodel` -> `d_model`) and the list of fields."""
    known = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(str(k) for k in set(given) - set(known))
    if unknown:
        close = difflib.get_close_matches(unknown[0], known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise error(f"{where}: unknown fields {unknown}{hint}; expected a subset of {sorted(known)}")


INT_FIELDS = ("d_model", "num_heads", "d_ff", "max_len", "vocab_size", "num_classes", "num_encoder_layers",
              "num_decoder_layers", "type_vocab_size", "src_vocab_size", "tgt_vocab_size", "pad_id")
FLOAT_FIELDS = ("dropout", "attention_dropout", "activation_dropout", "layer_norm_eps")


def normalise_numbers(config: TransformerConfig) -> None:
    """Integer scalars that are not Python ints (NumPy's np.int64(16): a size read from an array)
    become Python ints in the int fields, and real scalars (np.float32(0.1)) Python floats in the
    float fields, so a config holds plain numbers (its dict is JSON, its repr plain). Bools
    (Python's and NumPy's) and non-integral values are left as they came, for `validate` to refuse.
    Duck-typed (numbers.Integral / numbers.Real): this file imports no NumPy."""
    def plain(v: Any) -> bool:
        return type(v) in (int, float) or isinstance(v, bool)           # np.bool_ is no Integral

    for f in INT_FIELDS:
        v = getattr(config, f)
        if not plain(v) and isinstance(v, numbers.Integral):
            object.__setattr__(config, f, int(v))
    for f in FLOAT_FIELDS:
        v = getattr(config, f)
        if not plain(v) and isinstance(v, numbers.Real):
            object.__setattr__(config, f, int(v) if isinstance(v, numbers.Integral) else float(v))


def validate(config: TransformerConfig) -> None:
    """Raise ValueError("TransformerConfig.<field>: expected ..., got ...") for the first bad field."""
    def need(cond: bool, field: str, expected: str) -> None:
        if not cond:
            got = getattr(config, field)
            raise ValueError(f"TransformerConfig.{field}: expected {expected}, got {got!r}")

    def is_int(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool)

    c = config
    for f in ("d_model", "num_heads", "d_ff", "max_len", "vocab_size", "num_classes"):
        need(is_int(getattr(c, f)) and getattr(c, f) >= 1, f, "a positive int")
    for f in ("num_encoder_layers", "num_decoder_layers"):
        need(is_int(getattr(c, f)) and getattr(c, f) >= 0, f, "a non-negative int")
    need(is_int(c.type_vocab_size) and c.type_vocab_size >= 0, "type_vocab_size",
         "a non-negative int (0 = no segment embedding)")
    for f in ("src_vocab_size", "tgt_vocab_size"):
        v = getattr(c, f)
        need(v is None or (is_int(v) and v >= 1), f, "None or a positive int")
    need(c.d_model % c.num_heads == 0, "d_model", f"a multiple of num_heads={c.num_heads}")
    need(c.activation in ACTIVATIONS, "activation", f"one of {ACTIVATIONS}")
    need(c.positional in POSITIONALS, "positional", f"one of {POSITIONALS}")
    need(c.pooling in POOLINGS, "pooling", f"one of {POOLINGS}")
    need(c.dtype in DTYPES, "dtype", f"one of {DTYPES}")
    for f in ("dropout", "attention_dropout", "activation_dropout"):
        v = getattr(c, f)
        need(isinstance(v, (int, float)) and not isinstance(v, bool) and 0.0 <= v < 1.0, f,
             "a float in [0, 1)")
    need(isinstance(c.layer_norm_eps, (int, float)) and not isinstance(c.layer_norm_eps, bool)
         and 0 < c.layer_norm_eps < float("inf"), "layer_norm_eps", "a positive finite float")
    for f in ("norm_first", "final_norm", "scale_embeddings", "tie_embeddings",
              "share_embeddings", "bias", "output_bias", "embedding_norm"):
        need(isinstance(getattr(c, f), bool), f, "a bool")
    smallest = min(c.vocab_size, c.src_vocab, c.tgt_vocab)
    need(c.pad_id is None or (is_int(c.pad_id) and 0 <= c.pad_id < smallest),
         "pad_id", f"None or an int in [0, {smallest})")
    need(not c.share_embeddings or c.src_vocab == c.tgt_vocab, "share_embeddings",
         f"False when src_vocab_size ({c.src_vocab}) != tgt_vocab_size ({c.tgt_vocab})")


def install(cls: type) -> None:
    """Make `cls` (TransformerConfig) refuse unknown fields and validate every instance (once)."""
    if getattr(cls, "_fields_checked", False):
        return
    post_init, from_dict = cls.__post_init__, cls.from_dict.__func__

    def __new__(klass, *args: Any, **fields: Any):
        refuse_unknown_fields(klass, fields, "TransformerConfig", TypeError)   # a typo, named
        return object.__new__(klass)

    @functools.wraps(post_init)
    def __post_init__(self) -> None:
        post_init(self)                 # the dtype normalised to its name first
        normalise_numbers(self)         # np.int64(16) -> 16, np.float32(0.1) -> 0.1 (a Python float)
        validate(self)

    @functools.wraps(from_dict)
    def checked_from_dict(klass, d: dict):
        if not isinstance(d, Mapping):     # a list or None would be iterated as if it held names
            raise TypeError(f"TransformerConfig.from_dict: expected a dict of fields, got "
                            f"{type(d).__name__}")
        refuse_unknown_fields(klass, d, "TransformerConfig.from_dict", ValueError)
        return from_dict(klass, d)

    cls.__new__, cls.__post_init__ = staticmethod(__new__), __post_init__
    cls.from_dict = classmethod(checked_from_dict)
    cls.validate = validate
    cls._fields_checked = True


install(TransformerConfig)
