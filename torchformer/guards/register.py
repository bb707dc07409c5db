"""`@checks(kind, *classes)`: register a guard in torchformer.layers.module.CHECKS, the table Module
reads (the twin of npformer.guards.register).

    @checks("call", Linear)     def _(m, x): ... return (x,)

A "call" check receives the module and the call's arguments, raises on a bad one, and returns the
arguments forward runs on, as positions; it also covers subclasses (the nearest registered class wins).
"""
from __future__ import annotations

from torchformer.layers.module import CHECKS


def checks(kind: str, *classes: type):
    def register(fn):
        for cls in classes:
            CHECKS.setdefault(kind, {})[cls] = fn
        return fn
    return register
