"""Record every sub-module's forward output by dotted name, in both twins.

npformer: `record_numpy(model)` temporarily replaces each module instance's `forward` with a wrapper
that stores a copy of what it returned (an instance attribute shadows the class method; removed on
exit). torchformer: `record_torch(model)` registers forward hooks. Both yield an ordered dict
{dotted_name: [output of call 1, call 2, ...]} in the order modules were first called, with the same
names as `named_modules()` (a module registered under two names, like shared embeddings, is recorded
under its first name, which is what torch's deduplicating named_modules() uses). The root module
("") is not recorded: its output is the model's output.
"""
from __future__ import annotations

import contextlib
from collections import OrderedDict
from typing import Any, Iterator

import numpy as np


def _copy_numpy(out: Any) -> Any:
    if isinstance(out, np.ndarray):
        return out.copy()
    if isinstance(out, (tuple, list)):
        return type(out)(_copy_numpy(v) for v in out)
    return out


def unique_named_modules(model) -> list[tuple[str, Any]]:
    """(name, module) once per module object, under its first name (torch's convention)."""
    seen: set[int] = set()
    out = []
    for name, m in model.named_modules():
        if id(m) in seen:
            continue
        seen.add(id(m))
        out.append((name, m))
    return out


@contextlib.contextmanager
def record_numpy(model) -> Iterator["OrderedDict[str, list]"]:
    """Record the outputs of every npformer sub-module called inside the block."""
    records: "OrderedDict[str, list]" = OrderedDict()
    patched = []
    for name, m in unique_named_modules(model):
        if name == "" or "forward" in m.__dict__:
            continue
        original = m.forward

        def wrapper(*args, __f=original, __n=name, **kwargs):
            out = __f(*args, **kwargs)
            records.setdefault(__n, []).append(_copy_numpy(out))
            return out

        object.__setattr__(m, "forward", wrapper)
        patched.append(m)
    try:
        yield records
    finally:
        for m in patched:
            m.__dict__.pop("forward", None)


@contextlib.contextmanager
def record_torch(model) -> Iterator["OrderedDict[str, list]"]:
    """Record the outputs of every torch sub-module called inside the block (forward hooks)."""
    import torch

    records: "OrderedDict[str, list]" = OrderedDict()

    def snap(out):
        if isinstance(out, torch.Tensor):
            return out.detach().cpu().numpy().copy()
        if isinstance(out, (tuple, list)):
            return type(out)(snap(v) for v in out)
        return out

    handles = []
    for name, m in model.named_modules():
        if name == "":
            continue
        handles.append(m.register_forward_hook(
            lambda mod, inp, out, __n=name: records.setdefault(__n, []).append(snap(out))))
    try:
        yield records
    finally:
        for h in handles:
            h.remove()


def flatten_outputs(records: "OrderedDict[str, list]") -> "OrderedDict[str, Any]":
    """{name: [o1, o2]} -> {name: o1} for single calls, {name#0: o1, name#1: o2} for repeated calls;
    tuple outputs become name.0, name.1 (None entries dropped)."""
    flat: "OrderedDict[str, Any]" = OrderedDict()
    for name, calls in records.items():
        for c, out in enumerate(calls):
            key = name if len(calls) == 1 else f"{name}#{c}"
            if isinstance(out, (tuple, list)):
                for i, v in enumerate(out):
                    if v is not None:
                        flat[f"{key}.{i}"] = v
            elif out is not None:
                flat[key] = out
    return flat
