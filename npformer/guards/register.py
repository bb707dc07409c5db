"""`@checks(kind, *classes)`: register a guard in npformer.layers.module.CHECKS, the table Module reads.

    @checks("call", Linear)                 def _(m, x): ... return (x,)
    @checks("init", Linear)                 def _(in_features, out_features, ...): ... (raises)
    @checks("backward", Linear, LayerNorm)  def _(m, dout): ... return (dout,)

A "call" or "backward" check also covers subclasses (the nearest registered class wins); an "init"
check covers exactly its class's own __init__.
"""
from __future__ import annotations

from npformer.layers.module import CHECKS


def checks(kind: str, *classes: type):
    def register(fn):
        for cls in classes:
            CHECKS.setdefault(kind, {})[cls] = fn
        return fn
    return register
