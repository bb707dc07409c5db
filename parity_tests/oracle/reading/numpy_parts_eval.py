"""Inference mode for the parts of a NumPy candidate, as `torch.nn.Module.eval()` gives it to
every sub-module: a layer that holds its dropouts as parts (`self.dropout1 = Dropout(p=0.1)`, each
with `training = True` and an `eval()` of its own) but has no `eval()` itself kept them dropping,
and a right layer was NONDETERMINISTIC.

The oracle already calls the candidate's own `eval()` or sets its own `training` flag
(construct.finish_module). When the candidate has no `eval()`, every part it reaches (attributes,
private ones included, lists, tuples, dicts of parts; at most WALK_DEPTH deep and WALK_OBJECTS
objects) that keeps a boolean `training` flag is put in inference mode: its `eval()` is called when
it has one, else the flag is set to False. Arrays, classes, modules and functions are not entered.
A rate fixed in the code still shows where the oracle runs the candidate in training mode.
"""
from __future__ import annotations

import inspect

import numpy as np

WALK_DEPTH = 8
WALK_OBJECTS = 2000


def _children(o) -> list:
    if isinstance(o, dict):
        return list(o.values())
    if isinstance(o, (list, tuple)):
        return list(o)
    if hasattr(o, "__dict__"):
        return list(vars(o).values())
    return []


def _skip(o) -> bool:
    return o is None or isinstance(o, (np.ndarray, np.generic, str, bytes, int, float, complex)) \
        or inspect.ismodule(o) or inspect.isclass(o) or inspect.isroutine(o)


def eval_parts(obj) -> list[str]:
    """Put every part of `obj` holding a boolean `training` flag in inference mode (see the module
    docstring); returns the class names of the parts changed, in the order met."""
    if callable(getattr(obj, "eval", None)):
        return []                         # the candidate says itself what its eval() reaches
    changed: list[str] = []
    seen = {id(obj)}
    stack = [(c, 1) for c in reversed(_children(obj))]
    while stack and len(seen) <= WALK_OBJECTS:
        o, depth = stack.pop()
        if _skip(o) or id(o) in seen or depth > WALK_DEPTH:
            continue
        seen.add(id(o))
        if not isinstance(o, (dict, list, tuple)) and isinstance(getattr(o, "training", None), bool) \
                and o.training:
            try:
                if callable(getattr(o, "eval", None)):
                    o.eval()
                else:
                    o.training = False
                changed.append(type(o).__name__)
            except Exception:  # noqa: BLE001 - a part whose mode cannot be set keeps its own
                pass
        stack.extend((c, depth + 1) for c in reversed(_children(o)))
    return changed
