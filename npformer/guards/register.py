"""`@checks(kind, *classes)`: register a guard in npformer.layers.module.CHECKS, the table Module reads,
and the wrapping that runs the "init" and "backward" guards of every Module subclass.

    @checks("call", Linear)                 def _(m, x): ... return (x,)
    @checks("init", Linear)                 def _(in_features, out_features, ...): ... (raises)
    @checks("backward", Linear, LayerNorm)  def _(m, dout): ... return (dout,)

A "call" or "backward" check also covers subclasses (the nearest registered class wins); an "init"
check covers exactly its class's own __init__. Importing this file wraps every Module subclass, those
defined already and (through Module.__init_subclass__) those defined later: a class's own __init__
runs its "init" check first, its own backward is `checked_backward`'s.
"""
from __future__ import annotations

import functools
import inspect

from npformer.layers.module import CHECKS, Module, registered


def checks(kind: str, *classes: type):
    def register(fn):
        for cls in classes:
            CHECKS.setdefault(kind, {})[cls] = fn
        return fn
    return register


def checked_backward(bw):
    """`bw` as every Module class's backward runs: the class's "backward" check on the upstream
    gradient first, then bw, then the forward's cache freed, so a second backward after one forward
    raises (as torch frees its graph) instead of adding every gradient again."""
    @functools.wraps(bw)
    def backward(self, *args, **kw):
        if self.__dict__.get("_cache") is None and self.__dict__.get("_cache_freed", False):
            raise RuntimeError(
                f"{type(self).__name__}.backward called a second time after one forward: the "
                f"first backward freed the forward's cache (as torch frees its graph), and a "
                f"second one would add every gradient again; run forward again first")
        check = registered("backward", type(self))
        if check is not None and self.__dict__.get("_cache") is not None:
            args, kw = check(self, *args, **kw), {}
        out = bw(self, *args, **kw)
        object.__setattr__(self, "_cache", None)
        object.__setattr__(self, "_cache_freed", True)
        return out

    backward._frees_cache = True
    return backward


def checked_init(cls: type, init):
    """`init`, the own __init__ of `cls`, run after the "init" check registered for `cls` (if any)."""
    @functools.wraps(init)
    def __init__(self, *args, **kw):
        if cls in CHECKS["init"]:
            CHECKS["init"][cls](*args, **kw)
        init(self, *args, **kw)

    __init__._checks_init = True
    return __init__


def wrap(cls: type) -> None:
    """Wrap the __init__ and backward that `cls` defines itself (once)."""
    init = cls.__dict__.get("__init__")
    if init is not None and not getattr(init, "_checks_init", False):
        cls.__init__ = checked_init(cls, init)
    bw = cls.__dict__.get("backward")
    if bw is not None and not getattr(bw, "_frees_cache", False):
        cls.backward = checked_backward(bw)


def wrap_subclasses(cls: type) -> None:
    for sub in cls.__subclasses__():
        wrap(sub)
        wrap_subclasses(sub)


def wrap_on_definition(cls, **kwargs) -> None:
    super(Module, cls).__init_subclass__(**kwargs)
    wrap(cls)


Module.__init_subclass__ = classmethod(wrap_on_definition)
wrap_subclasses(Module)


@checks("call", Module)
def keywords_as_positions(m, *args, **kwargs) -> tuple:
    """The call check of a module without its own: nothing is checked, keywords become positions."""
    if not kwargs:
        return args
    bound = inspect.signature(m.forward).bind(*args, **kwargs)
    if bound.kwargs:
        raise TypeError(f"{type(m).__name__}: define check_inputs (or register one in "
                        f"npformer.guards) to pass keyword-only "
                        f"arguments {sorted(bound.kwargs)} through a call")
    return bound.args
