"""Module: the checked call every torchformer layer shares (the twin of npformer.layers.module).

Constructing a module runs the "init" check registered for its class first (its constructor
arguments; torchformer.guards.register wraps each subclass's own __init__ for that); calling a
module is the public, checked entry: `module(*args)` runs the "call" check registered for its class
(or its nearest registered base class) once, then nn.Module.__call__ (hooks, then forward) on the
checked arguments, with `trusted()` True inside: the modules it calls through `self.child(...)` skip
their own checks, since their inputs are the caller's own, already checked, tensors. Called
directly, every module checks. The checks live apart from the math, in torchformer.guards, which
registers them per class in CHECKS below; __init__ and forward hold only the math.

Under torch.compile `trusted()` is False, so every level runs its shape and dtype checks (dynamo
turns them into guards, free per call) and the value checks skip themselves
(torchformer.guards.validation describes the rules).
"""
from __future__ import annotations

import threading
from typing import Callable

import numpy as np
import torch
from torch import nn

# {"init": {class: check(*args, **kwargs)}, raises on a bad constructor argument (that class only),
#  "call": {class: check(module, *args, **kwargs) -> forward's arguments, as positions},
#  "encode", "decode", ...: the checks of other public methods, by name (Module.checked)}
CHECKS: dict[str, dict] = {"init": {}, "call": {}}

FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
DTYPE_NAMES = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
               "bfloat16": torch.bfloat16, "float": torch.float64, "double": torch.float64,
               "single": torch.float32, "half": torch.float16}

compiling = torch.compiler.is_compiling


class _Trust(threading.local):
    active = False


TRUST = _Trust()       # TRUST.active: inside a checked call (read it through trusted(), or as Module does)


def trusted() -> bool:
    """True inside a torchformer model/module body that already checked its arguments (eager only;
    under torch.compile it is False, so shape and dtype checks are traced into guards)."""
    return TRUST.active and not compiling()      # the flag first: False almost always, and cheap


def run_checked(fn: Callable, *args, **kwargs):
    """fn(*args, **kwargs) with trusted() True inside: for a body whose arguments were just checked.
    Not a context manager on purpose: dynamo traces this plain call without a graph break."""
    if compiling() or TRUST.active:
        return fn(*args, **kwargs)
    TRUST.active = True
    try:
        return fn(*args, **kwargs)
    finally:
        TRUST.active = False


def to_torch_dtype(dtype) -> torch.dtype:
    """'float32' / 'float64' / numpy dtype / torch.dtype -> torch.dtype (floating only)."""
    if isinstance(dtype, torch.dtype):
        out = dtype
    else:
        name = getattr(dtype, "name", None) or getattr(dtype, "__name__", None) or str(dtype)
        out = DTYPE_NAMES.get(name)
    if out not in FLOAT_DTYPES:
        raise TypeError(f"dtype: expected one of 'float32', 'float64' (or a torch float dtype), "
                        f"got {dtype!r}")
    return out


def registered(kind: str, cls: type):
    """The `kind` check registered for `cls` or its nearest base class, or None."""
    table = CHECKS.get(kind, {})
    found = table.get(cls)                              # the class's own (one lookup: every call)
    if found is None:
        found = next((table[k] for k in cls.__mro__ if k in table), None)
    return found


class StrictLoad:
    """Mixin (before nn.Module) making load_state_dict all-or-nothing, with npformer's checks and
    messages (the "load_state_dict" check torchformer.guards registers: npformer.guards.state's
    check_state_dict): missing / unexpected keys (strict), wrong shapes, complex, string, bool or
    object values and ragged lists are refused before any parameter is written (torch's own copies
    matching keys first, warns on complex and fails unclearly on a list or a string array). numpy
    arrays and lists are accepted as values."""

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        own = {k: tuple(v.shape) for k, v in torch.nn.Module.state_dict(self).items()}
        staged = registered("load_state_dict", type(self))(type(self).__name__, own, state_dict,
                                                            strict)
        state = {k: v if isinstance(v, torch.Tensor) else torch.from_numpy(np.array(v))
                 for k, v in staged.items()}
        return torch.nn.Module.load_state_dict(self, state, strict=strict, assign=assign)


class Module(StrictLoad, nn.Module):
    """nn.Module whose constructor checks its arguments first and whose call checks its arguments
    once, at the outermost checked call."""

    def __call__(self, *args, **kwargs):
        if TRUST.active and not compiling():            # inside a checked call: already checked
            return nn.Module.__call__(self, *args, **kwargs)
        check = registered("call", type(self))
        if check is None:
            return nn.Module.__call__(self, *args, **kwargs)
        return run_checked(nn.Module.__call__, self, *check(self, *args, **kwargs))

    def checked(self, method: str, body, *args, **kwargs):
        """Another public method (Transformer.encode ...): the check registered under `method`, then
        `body` (the method's math) on the checked arguments, under run_checked."""
        return run_checked(body, *registered(method, type(self))(self, *args, **kwargs))
