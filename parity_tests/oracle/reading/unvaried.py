"""The forward's own arguments no example varied: those the oracle never passes (left at the
signature's default: `scale=None`, `key_padding_mask=None`, `use_cache=False`, a `**kwargs`) and the
call flags it passes at one value in every run (CALL_FLAGS: `is_causal=False`, `need_weights=True`,
a `dropout_p=0.0` no mode changes). A candidate ignoring such an argument matches, so the worker
names them and the parent's one-value line (core/completeness.one_value_line) says "not checked".

    unvaried(adapter, inst) -> {argument: "left at its default None" | "passed False in every run"}

The constructor's own arguments the build left at their defaults (`causal=False`, `bias=True`,
`pre_norm=`: reading/construct.py records them as ctor_left) are named too, "left at its default
False in the constructor".

A forward whose claimed signature (`functools.wraps` of a narrower function, `__signature__` set)
leaves out arguments its own code takes has each of those named "hidden by its claimed signature"
(read from the function's code object, which the claim does not change).

Read from the signature the adapter bound (the worker's side); an adapter file's own call
(`--adapter` with call()) is the instructor's choice and is not listed.
"""
from __future__ import annotations

import inspect
from typing import Any

from .signatures import CALL_FLAGS, TRAINING_FLAGS, signature_of

MAX_ITEMS = 24
MAX_TEXT = 60


def _forward(inst) -> Any:
    if inst.obj is None:
        return inst.call
    return getattr(inst.obj, "forward", None) or inst.obj


def _short(value: Any) -> str:
    name = getattr(value, "__qualname__", None) if callable(value) else None
    if isinstance(name, str):           # a function or class: its name, never its address
        return name if name.replace(".", "").isidentifier() else f"a {type(value).__name__}"
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001  (a default's own __repr__ is the submission's code)
        text = f"a {type(value).__name__}"
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT - 3] + "..."


def _rate_varied(constants: dict, adapter=None) -> bool:
    """The eval_rate mode passes a dropout rate of 0.5 where the forward also takes a training flag
    (sandbox/modes.eval_rate), one of its own switches too (`deterministic=True`)."""
    own = getattr(adapter, "switch_inference", None) or {}
    return any(type(v) is type(own[a]) and v == own[a] if a in own else a in TRAINING_FLAGS and v is False
               for a, v in constants.items())


def unvaried(adapter, inst) -> dict[str, str]:
    try:
        return _unvaried(adapter, inst)
    except Exception:  # noqa: BLE001 - a signature object of the submission's making
        return {"**signature": "could not be read: its arguments were not listed"}


def _unvaried(adapter, inst) -> dict[str, str]:
    hooks = getattr(adapter, "hooks", None)
    if inst is None or inst.table or (hooks is not None and hooks.call is not None):
        return {}
    sig = signature_of(_forward(inst))
    if sig is None:
        return {}
    b = inst.binding
    passed = set(b.keywords) | set(b.constants) | set(b.params) | set(b.nested)
    positional = len(b.positional)
    flags = {k.lower() for k in CALL_FLAGS}
    out: dict[str, str] = {}
    index = 0
    for p in sig.parameters.values():
        if p.name in ("self", "cls"):
            continue
        if p.kind == p.VAR_POSITIONAL:
            index = positional
            continue
        if p.kind == p.VAR_KEYWORD:
            out["**" + p.name] = "no other keyword ever passed"
            continue
        by_position = p.kind != p.KEYWORD_ONLY and index < positional
        if p.kind != p.KEYWORD_ONLY:
            index += 1
        if by_position or p.name in passed and p.name not in b.constants:
            continue
        if p.name in b.constants:
            v = b.constants[p.name]
            switch = p.name in (getattr(adapter, "training_switches", None) or ())
            if (p.name.lower() not in flags and not switch) or p.name in b.guessed:
                continue                  # a size, or a required argument's guessed value (noted)
            if p.name.lower() in TRAINING_FLAGS or switch or ("drop" in p.name.lower()
                                                    and _rate_varied(b.constants, adapter)):
                continue                  # varied by the train and eval_rate modes
            out[p.name] = f"passed {_short(v)} in every run"
        elif p.default is not inspect.Parameter.empty:
            out[p.name] = f"left at its default {_short(p.default)}"
        if len(out) >= MAX_ITEMS:
            break
    for name in _hidden(_forward(inst), sig):
        if len(out) >= MAX_ITEMS:
            break
        out.setdefault(name, "hidden by its claimed signature (its code takes it)")
    for name, default in (getattr(adapter, "ctor_left", None) or {}).items():
        if len(out) >= MAX_ITEMS:
            break
        out.setdefault(name, f"left at its default {_short(default)} in the constructor")
    return out


def _hidden(fn, sig: inspect.Signature) -> list[str]:
    """Named parameters of the forward's own code that its claimed signature leaves out."""
    raw = getattr(fn, "__func__", fn)
    code = getattr(raw, "__code__", None)
    if code is None:
        return []
    count = code.co_argcount + code.co_kwonlyargcount
    claimed = set(sig.parameters)
    return [n for n in code.co_varnames[:count] if n not in ("self", "cls") and n not in claimed]
