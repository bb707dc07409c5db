"""The check of `load_state_dict`, for both twins: registered as Module's "load_state_dict" check.

It is framework-free (names, shapes and dtype names; a torch tensor passes through untouched), so
torchformer's all-or-nothing load uses the same rule and messages: it looks the check up in
npformer.layers.module.CHECKS, the table its layers floor may read.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from npformer.guards.register import checks
from npformer.layers.module import Module

# numpy's names of the real dtypes a state dict may hold (a torch dtype is named without "torch.")
REAL_DTYPE_NAMES = frozenset({"float16", "bfloat16", "float32", "float64", "longdouble", "float128",
                              "int8", "int16", "int32", "int64",
                              "uint8", "uint16", "uint32", "uint64"})


def dtype_name(dtype) -> str:
    """numpy's name for a numpy or torch dtype ("float32", "complex64", "<U3" ...)."""
    return str(dtype).replace("torch.", "")


def non_finite(v) -> int:
    """How many NaN/inf entries a numpy array or a tensor holds (a tensor counts with its own
    isfinite, on its own device: no torch import here)."""
    if isinstance(v, np.ndarray):
        return int(v.size - np.count_nonzero(np.isfinite(v)))
    return int(v.numel() - v.isfinite().sum())


# prefixes that wrappers put before every key of the model they hold
WRAPPER_PREFIXES = {"_orig_mod.": ("a torch.compile'd model", "compiled._orig_mod"),
                    "module.": ("a DistributedDataParallel or DataParallel model", "wrapper.module")}


def wrapper_prefix_hint(own, missing: list, unexpected: list) -> str | None:
    """When every given key is one of the module's own keys behind a wrapper's prefix, a message
    saying so and how to load them; else None."""
    if not unexpected or len(missing) != len(own):
        return None
    for prefix, (what, inner) in WRAPPER_PREFIXES.items():
        if all(k.startswith(prefix) and k[len(prefix):] in own for k in unexpected):
            return (f"every key starts with {prefix!r} (the state_dict of {what}); expected the "
                    f"plain model's keys such as {missing[0]!r}: load "
                    f"{{k.removeprefix({prefix!r}): v for k, v in state.items()}}, or take the "
                    f"state_dict of the model inside ({inner}.state_dict())")
    return None


@checks("load_state_dict", Module)
def check_state_dict(owner: str, own: dict, state, strict: bool = True) -> dict:
    """{name: value} of the keys of `state` to copy into `own` ({name: shape}) of the module class
    named `owner`: a TypeError when `state` is not a mapping, else one ValueError listing every
    missing / unexpected (when strict) key and every value that is not a real array of its shape
    with finite values (a NaN or inf weight would turn every output into NaN).
    Tensors are returned as they are, everything else as a numpy array."""
    if not isinstance(state, Mapping):
        raise TypeError(f"{owner}.load_state_dict: state: expected a mapping of name -> array, got "
                        f"{type(state).__name__}")
    missing = [k for k in own if k not in state]
    unexpected = [k for k in state if k not in own]
    problems = []
    hint = wrapper_prefix_hint(own, missing, unexpected)
    if hint and strict:
        problems.append(hint)
        missing = unexpected = []
    if missing and strict:
        problems.append(f"missing keys {missing}")
    if unexpected and strict:
        problems.append(f"unexpected keys {unexpected}")
    staged = {}
    for k, shape in own.items():
        if k not in state:
            continue
        v = state[k]
        if not hasattr(v, "dtype") or not hasattr(v, "shape"):
            try:
                v = np.asarray(v)
            except (ValueError, TypeError) as e:
                problems.append(f"{k}: expected an array, got a {type(state[k]).__name__} that is "
                                f"not one ({str(e).splitlines()[0]})")
                continue
        if dtype_name(v.dtype) not in REAL_DTYPE_NAMES:
            problems.append(f"{k}: expected a real (float or integer) array, got dtype "
                            f"{dtype_name(v.dtype)}")
        elif tuple(v.shape) != tuple(shape):
            problems.append(f"{k}: expected shape {tuple(shape)}, got {tuple(v.shape)}")
        elif (bad := non_finite(v)):
            problems.append(f"{k}: expected finite values, got {bad} NaN/inf entries")
        else:
            staged[k] = v
    if problems:
        raise ValueError(f"{owner}.load_state_dict: " + "; ".join(problems)
                         + " (nothing was loaded)")
    return staged
