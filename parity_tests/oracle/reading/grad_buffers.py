"""Gradient buffers a NumPy candidate allocates beside its weights when it is built
(`self.grads = {"Wq": np.zeros_like(self.Wq)}`, `self.dW = np.zeros_like(self.W)`) and fills in
place in backward (`self.grads["Wq"][:] = x.T @ dq`). Built in float32 and handed float64 weights,
such a layer computed its gradients in float64 and stored them rounded to float32: right code was a
MISMATCH at 1e-8, "within float32 rounding". When a weight is replaced by one of a wider float
dtype, each buffer kept for it under a gradient name, of its shape and a narrower float dtype, is
widened to the weight's dtype (its values kept), as torch's `module.double()` converts a module's
gradients with its parameters."""
from __future__ import annotations

import numpy as np

GRAD_DICTS = ("grads", "gradients", "grad", "dparams", "param_grads")


def _narrower(buf, new: np.ndarray) -> bool:
    return isinstance(buf, np.ndarray) and buf.dtype.kind == "f" and buf.shape == new.shape and \
        buf.dtype.itemsize < new.dtype.itemsize


def widen(holders, key: str, patterns, new: np.ndarray) -> list[str]:
    """Widen the gradient buffers of the weight `key` the `holders` keep (attributes named by
    `patterns`, entries of their gradient dicts); the names widened."""
    done = []
    for h in holders:
        if h is None or isinstance(h, (list, dict)):
            continue
        for pat in patterns:
            name = pat.format(key)
            if _narrower(getattr(h, name, None), new):
                setattr(h, name, getattr(h, name).astype(new.dtype))
                done.append(name)
        for dname in GRAD_DICTS:
            d = getattr(h, dname, None)
            if not isinstance(d, dict):
                continue
            for k in (key, "d" + key, "d_" + key, "grad_" + key):
                if _narrower(d.get(k), new):
                    d[k] = d[k].astype(new.dtype)
                    done.append(f"{dname}[{k!r}]")
    return done
