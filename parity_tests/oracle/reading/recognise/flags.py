"""Recogniser: required constructor flags that only switch on extras the oracle does not read
(gordic-style `log_attention_weights`, `return_attn`, `use_cache`, `output_attentions`, `verbose`):
a boolean-looking REQUIRED parameter gets False, and the notes say so.

Boolean-looking: annotated `bool`, or named like a switch (log_, return_, use_, output_, save_,
store_, keep_, need_, enable_, with_, is_, has_, debug, verbose). Flags that decide the computation
itself (a bias, a mask, pre-norm) are left alone: passing False there would be a guess about the
computation, so they stay an interface error naming the argument. False is still only an
assumption: if it switched the computation, the comparison on the output says so.

A required causal flag (reading/signatures.is_causal_flag: `causal`, `is_causal`, `masked`,
`mask_back_connections`, ...) is no
guess: it gets False for the main runs (the reference's attention is not causal), and the
causal_ctor mode (sandbox/modes.py) builds it True on every example with as many keys as queries,
compared with the reference under a causal mask, so both of its values are checked. A causal flag
that defaults to True (`MHSelfAttention(dim, heads=8, causal=True)`, a course's attention built
causal for its language model) is read the same way for attention and encoder layers, whose
reference is not causal: passed False for the main runs (`causal_defaults`), True for the causal
run; without it such a class was compared causal against the unmasked reference and failed.
"""
from __future__ import annotations

from ..signatures import is_causal_flag
from .base import MISSING

PREFIXES = ("log_", "return_", "use_", "output_", "save_", "store_", "keep_", "need_", "enable_",
            "with_", "is_", "has_", "should_", "do_")
WORDS = ("debug", "verbose", "trace", "logging", "log", "visualize", "visualise", "training")
NOT_CAUSAL = ("sdpa", "mha", "encoder_layer")
"""Components whose reference attention is not causal (a decoder's self-attention is)."""
DECIDES = ("bias", "causal", "mask", "norm", "first", "scale", "share", "tie", "residual", "gelu", "relu")


def looks_boolean(param) -> bool:
    name = param.name.lower()
    if any(word in name for word in DECIDES):
        return False
    ann = param.annotation
    if ann is bool or ann == "bool":
        return True
    return name in WORDS or (name.startswith(PREFIXES) and param.default is param.empty)


def value(ctx, param, values: dict):
    """False for a required flag that only switches extras on, or a causal one; else MISSING."""
    if param.default is param.empty and is_causal_flag(param.name) and ctx.depth == 0:
        ctx.note(f"constructor argument {param.name!r}: a required causal flag; built False for the "
                 f"main runs and True for the causal run (examples with as many keys as queries, "
                 f"compared under a causal mask)")
        return False
    if param.default is not param.empty or not looks_boolean(param):
        return MISSING
    ctx.note(f"constructor argument {param.name!r}: a required flag; passed False (assumption: it "
             f"only switches on extras, such as logging or returning attention weights)")
    return False


def causal_defaults(ctx, params, taken: set) -> dict:
    """{name: False} for the top-level constructor's causal flags that default to True, on a
    component whose reference is not causal, unless --init-kwargs names them."""
    if ctx.depth != 0 or ctx.component not in NOT_CAUSAL:
        return {}
    out = {p.name: False for p in params if p.default is True and is_causal_flag(p.name)
           and p.name not in taken}
    for name in out:
        ctx.note(f"constructor argument {name!r}: a causal flag that defaults to True; built False "
                 f"for the main runs (the reference's attention is not causal) and True for the "
                 f"causal run (examples with as many keys as queries, compared under a causal mask)")
    return out
