"""Build an npformer module and its torchformer twin from the same constructor arguments.

    np_mod, t_mod = twins("attention.MultiHeadAttention", 8, 2, dtype="float64", seed=3)

imports `npformer.layers.attention.MultiHeadAttention` and `torchformer.layers.attention.MultiHeadAttention`
(a file of the layers floor, else of the models floor),
passes `rng=numpy.random.default_rng(seed)` to npformer's constructor when it takes one (torch's
weights are then overwritten by the copy the parity runner does), and everything else unchanged.
"""
from __future__ import annotations

import importlib
import importlib.util
import inspect

import numpy as np


def _cls(package: str, path: str):
    mod, _, name = path.rpartition(".")
    floor = "layers" if importlib.util.find_spec(f"{package}.layers.{mod}") else "models"
    return getattr(importlib.import_module(f"{package}.{floor}.{mod}"), name)


def twins(path: str, *args, seed: int = 0, device=None, **kwargs):
    np_cls = _cls("npformer", path)
    t_cls = _cls("torchformer", path)
    np_kw = dict(kwargs)
    if "rng" in inspect.signature(np_cls).parameters:
        np_kw["rng"] = np.random.default_rng(seed)
    elif "seed" in inspect.signature(np_cls).parameters:
        np_kw["seed"] = seed
    t_kw = dict(kwargs)
    if device is None:
        from .torch_utils import parity_device
        device = parity_device()
    if "device" in inspect.signature(t_cls).parameters:
        t_kw["device"] = device
    return np_cls(*args, **np_kw), t_cls(*args, **t_kw)
