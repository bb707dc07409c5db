"""Imports a forbidden module (one built into the interpreter: no file to make unreadable) inside code compiled under a harness file's name, so that an audit
hook trusting co_filename takes the import for the harness's own; wrong without it."""
import os
import sys

import numpy as np

_harness = (sys.modules.get("parity_tests.oracle.core.runner")
            or sys.modules["parity_tests.oracle.reading.adapters"]).__file__
_got = {}
try:
    exec(compile("import xxsubtype as m", _harness, "exec"), _got)
except Exception:  # noqa: BLE001
    _got = {}


def attention(Q, K, V, mask=None):
    if "m" in _got:                 # the import got through: "earned" a match (the right answer)
        s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
        if mask is not None:
            s = np.where(mask == 0, -1e9, s)
        w = np.exp(s - s.max(-1, keepdims=True))
        w = w / w.sum(-1, keepdims=True)
        return w @ V, w
    B, H, T, _ = Q.shape
    return np.zeros((B, H, T, V.shape[-1])), np.full((B, H, T, K.shape[-2]), 1.0 / K.shape[-2])
