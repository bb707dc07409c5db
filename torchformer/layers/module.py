"""Module: the checked call every torchformer layer shares (the twin of npformer.layers.module).

Calling a module is the public, checked entry: `module(*args)` runs the "call" check registered for
its class (or its nearest registered base class) once, then nn.Module.__call__ (hooks, then forward)
on the checked arguments, with `trusted()` True inside: the modules it calls through
`self.child(...)` skip their own checks, since their inputs are the caller's own, already checked,
tensors. Called directly, every module checks. The checks live apart from the math, in
torchformer.guards, which registers them per class in CHECKS below; forward holds only the math.

Under torch.compile `trusted()` is False, so every level runs its shape and dtype checks (dynamo
turns them into guards, free per call) and the value checks skip themselves
(torchformer.layers.validation describes the rules).
"""
from __future__ import annotations

from torch import nn

from torchformer.layers.validation import TRUST, StrictLoad, compiling, run_checked

# {"call": {class: check(module, *args, **kwargs) -> forward's arguments, as positions},
#  "encode", "decode", ...: the checks of other public methods, by name (Module.checked)}
CHECKS: dict[str, dict] = {"call": {}}


def registered(kind: str, cls: type):
    """The `kind` check registered for `cls` or its nearest base class, or None."""
    table = CHECKS.get(kind, {})
    found = table.get(cls)                              # the class's own (one lookup: every call)
    if found is None:
        found = next((table[k] for k in cls.__mro__ if k in table), None)
    return found


class Module(StrictLoad, nn.Module):
    """nn.Module whose call checks its arguments once, at the outermost checked call."""

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
