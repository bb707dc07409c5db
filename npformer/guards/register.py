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
import threading

from npformer.layers.module import CHECKS, Module, registered

# the checks that receive a user's own call, and how that call is spelled (a check for several
# classes is registered once per class, each wrapped with its class's name)
USER_CALLS = {"call": "{}.forward", "init": "{}", "encode": "{}.encode", "decode": "{}.decode",
              "backward": "{}.backward"}


def binding_error(fn, kind: str, cls: type, args: tuple, kwargs: dict) -> TypeError | None:
    """When calling `fn` (a check) raised a TypeError: if the arguments do not even bind to its
    signature (one missing, one too many, an unknown keyword), the error as the user's own call
    would name it (`Transformer.forward: missing a required argument: 'tgt'; expected
    Transformer.forward(src, tgt, src_mask=None, tgt_mask=None)`) instead of Python's words about
    the check function; else None (the check itself refused a value, with its own message)."""
    sig = inspect.signature(fn)
    try:
        sig.bind(*args, **kwargs)
    except TypeError as e:
        params = list(sig.parameters.values())[0 if kind == "init" else 1:]   # not the module
        shown = ", ".join(str(p) for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
        name = type(args[0]).__name__ if kind != "init" and args else cls.__name__
        where = USER_CALLS[kind].format(name)
        return TypeError(f"{where}: {e}; expected {where}({shown})")
    return None


def user_facing(fn, kind: str, cls: type):
    """`fn` registered for `cls`: a call whose arguments do not bind gets binding_error's message.
    The check runs exactly as before otherwise (the signature is read only after a TypeError)."""
    @functools.wraps(fn)
    def check(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except TypeError as e:
            better = binding_error(fn, kind, cls, args, kwargs)
            if better is None:
                raise
            raise better from e
    return check


def checks(kind: str, *classes: type):
    def register(fn):
        for cls in classes:
            CHECKS.setdefault(kind, {})[cls] = user_facing(fn, kind, cls) if kind in USER_CALLS else fn
        return fn
    return register


_BACKWARDS = threading.local()      # .depth: the module backwards running in this thread


def outermost_backward() -> bool:
    """True inside the check of a backward the user called (not one a parent module's backward
    runs): the one place an upstream gradient is scanned for NaN/inf, once per public call."""
    return getattr(_BACKWARDS, "depth", 0) == 1


def checked_backward(bw):
    """`bw` as every Module class's backward runs: the class's "backward" check on the upstream
    gradient first, then bw, then the forward's cache freed, so a second backward after one forward
    raises (as torch frees its graph) instead of adding every gradient again. The backwards running
    are counted per thread, so a check can tell the user's call from a parent's (outermost_backward)."""
    @functools.wraps(bw)
    def backward(self, *args, **kw):
        if self.__dict__.get("_cache") is None and self.__dict__.get("_cache_freed", False):
            raise RuntimeError(
                f"{type(self).__name__}.backward called a second time after one forward: the "
                f"first backward freed the forward's cache (as torch frees its graph), and a "
                f"second one would add every gradient again; run forward again first")
        depth = getattr(_BACKWARDS, "depth", 0)
        _BACKWARDS.depth = depth + 1
        try:
            check = registered("backward", type(self))
            if check is not None and self.__dict__.get("_cache") is not None:
                args, kw = check(self, *args, **kw), {}
            out = bw(self, *args, **kw)
        finally:
            _BACKWARDS.depth = depth
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
