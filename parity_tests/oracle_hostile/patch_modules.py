"""Wrong (zeros), and patches numpy and the oracle's comparison through sys.modules to say 'equal'."""
import sys

import numpy as np

for name in list(sys.modules):
    mod = sys.modules[name]
    for fn in ("allclose", "array_equal", "isclose"):
        if name == "numpy" and hasattr(mod, fn):
            setattr(mod, fn, lambda *a, **k: True)
    if name.startswith("parity_tests") and hasattr(mod, "measure"):
        class _Pass:
            passed, problem, ratio, n_over, max_abs = True, "", 0.0, 0, 0.0
        setattr(mod, "measure", lambda *a, **k: _Pass())
np.abs = lambda x: np.zeros_like(x)


def attention(Q, K, V, mask=None):
    B, H, T, _ = Q.shape
    return np.zeros((B, H, T, V.shape[-1])), np.zeros((B, H, T, K.shape[-2]))
