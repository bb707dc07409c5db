"""`@checks(kind, *classes)`: register a guard in torchformer.layers.module.CHECKS, the table Module
reads (the twin of npformer.guards.register).

    @checks("call", Linear)     def _(m, x): ... return (x,)

A "call" check receives the module and the call's arguments, raises on a bad one, and returns the
arguments forward runs on, as positions; it also covers subclasses (the nearest registered class wins).
An "init" check covers exactly its class's own __init__: importing this file wraps the __init__ of
every Module subclass, those defined already and (through Module.__init_subclass__) those defined
later, so that it runs its class's "init" check first.
"""
from __future__ import annotations

import functools

from npformer.guards.register import USER_CALLS, user_facing
from torchformer.layers.module import CHECKS, Module


def checks(kind: str, *classes: type):
    def register(fn):
        for cls in classes:
            CHECKS.setdefault(kind, {})[cls] = user_facing(fn, kind, cls) if kind in USER_CALLS else fn
        return fn
    return register


def checked_init(cls: type, init):
    """`init`, the own __init__ of `cls`, run after the "init" check registered for `cls` (if any)."""
    @functools.wraps(init)
    def __init__(self, *args, **kw):
        check = CHECKS["init"].get(cls)
        if check is not None:
            check(*args, **kw)
        init(self, *args, **kw)

    __init__._checks_init = True
    return __init__


def wrap(cls: type) -> None:
    """Wrap the __init__ that `cls` defines itself (once)."""
    init = cls.__dict__.get("__init__")
    if init is not None and not getattr(init, "_checks_init", False):
        cls.__init__ = checked_init(cls, init)


def wrap_subclasses(cls: type) -> None:
    for sub in cls.__subclasses__():
        wrap(sub)
        wrap_subclasses(sub)


def wrap_on_definition(cls, **kwargs) -> None:
    super(Module, cls).__init_subclass__(**kwargs)
    wrap(cls)


Module.__init_subclass__ = classmethod(wrap_on_definition)
wrap_subclasses(Module)
