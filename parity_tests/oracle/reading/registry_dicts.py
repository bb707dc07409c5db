"""Weights kept in a registry dict of the object's own, keyed by scoped names: a NumPy library
after a framework's layer base class keeps `self._parameters = {'Dense/W': W, 'Dense/b': b}` (the
layer's name, a slash, the weight's) and reads them back with `get_parameter('W')`. The attribute is
private and its keys are no attribute names, so the walk of the object's arrays found nothing and
the verdict was "holds no parameters at all". A private dict whose values are all float arrays is
read in the walk's second pass (the one for private weights), each array named by the last part of
its key (`W`, `scale`), written back into the same dict.
"""
from __future__ import annotations

import numpy as np


def is_registry(v) -> bool:
    """A dict of float arrays (at least one axis each) under string keys."""
    return isinstance(v, dict) and bool(v) and all(
        isinstance(k, str) and isinstance(a, np.ndarray) and a.dtype.kind == "f" and a.ndim >= 1
        for k, a in v.items())


def key_name(key) -> str:
    """The weight's own name in a scoped key: 'FFN/Dense1/W' -> 'W'."""
    return str(key).rsplit("/", 1)[-1] or str(key)
