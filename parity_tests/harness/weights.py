"""Weights and gradients by name, for both twins (npformer Modules and torch nn.Modules).

`copy_weights(np_module, torch_module)` is a plain copy by state_dict key (the twins share names,
shapes and layouts); it checks the key sets and shapes first and says exactly what differs.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np


def is_torch_module(m: Any) -> bool:
    return type(m).__module__.startswith("torch") or hasattr(m, "register_forward_hook")


def copy_weights(np_module, torch_module) -> None:
    """Copy every npformer parameter into the torch module with the same state_dict key."""
    import torch

    src = np_module.state_dict()
    dst = torch_module.state_dict()
    missing = [k for k in src if k not in dst]
    extra = [k for k in dst if k not in src]
    bad = [f"{k}: numpy {src[k].shape} vs torch {tuple(dst[k].shape)}" for k in src
           if k in dst and tuple(dst[k].shape) != src[k].shape]
    if missing or extra or bad:
        raise AssertionError(f"copy_weights: state_dict keys/shapes differ between twins: only in "
                             f"npformer {missing}, only in torch {extra}, shape mismatches {bad}")
    params = dict(torch_module.named_parameters(remove_duplicate=False))
    buffers = dict(torch_module.named_buffers(remove_duplicate=False))
    with torch.no_grad():
        for k, v in src.items():
            t = params.get(k, buffers.get(k))
            if t is None:
                raise AssertionError(f"copy_weights: {k} is in torch's state_dict but is neither a "
                                     f"parameter nor a buffer")
            t.copy_(torch.as_tensor(v, dtype=t.dtype, device=t.device))


def numpy_grads(model) -> "OrderedDict[str, np.ndarray]":
    """{name: .grad} once per distinct parameter (tied ones under their first name)."""
    return OrderedDict((n, p.grad.copy()) for n, p in model.named_parameters())


def torch_grads(model) -> "OrderedDict[str, np.ndarray]":
    """{name: .grad as numpy} once per distinct parameter; a parameter autograd never reached
    (grad None) reports zeros, which is what npformer accumulates for it."""
    out: "OrderedDict[str, np.ndarray]" = OrderedDict()
    for n, p in model.named_parameters():
        g = p.grad
        out[n] = (np.zeros(tuple(p.shape), dtype=str(p.dtype).replace("torch.", ""))
                  if g is None else g.detach().cpu().numpy().copy())
    return out


def grads_by_name(model) -> "OrderedDict[str, np.ndarray]":
    return torch_grads(model) if is_torch_module(model) else numpy_grads(model)


def zero_torch_grads(model) -> None:
    for p in model.parameters():
        p.grad = None


def perturb_parameters(np_module, rng: np.random.Generator, scale: float = 0.3) -> None:
    """Move parameters off their special initial values so bugs touching them show: all-zero
    parameters (biases) get N(0, scale^2) entries, all-one ones (LayerNorm gains) 1 + N(0, scale^2).
    Other parameters (Xavier weights, embeddings) are left as initialised. Tied parameters are
    visited once."""
    for _, p in np_module.named_parameters():
        d = p.data
        if not d.size:
            continue
        if np.all(d == 0):
            d[...] = (scale * rng.standard_normal(d.shape)).astype(d.dtype)
        elif np.all(d == 1):
            d[...] = (1 + scale * rng.standard_normal(d.shape)).astype(d.dtype)
