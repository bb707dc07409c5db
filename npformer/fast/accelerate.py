"""Give a model's (or a loss's) elementwise modules their fast forward and backward, and take them back.

    accelerate(model, threads=2)        every Activation, LayerNorm, Dropout, MultiHeadAttention
    accelerate(loss_fn, threads=2)      and CrossEntropyLoss inside gets npformer.fast's methods
    restore_plain(model)                the plain methods again
    accelerated_threads(model)          the threads they use, or None when none is accelerated

The fast methods are bound to each module instance (instance attributes `forward`, `backward`
and `fast_threads`): the classes in npformer.layers, and every other model, are untouched, and
a model copied with copy.deepcopy (data parallelism's replicas) keeps them. They keep the plain
methods' checks, caches, recorded dropout masks and attributes, and give the plain results bit
for bit (tests/npformer/fast/). `threads` is how many threads split each elementwise pass (by
rows; NumPy releases the GIL inside them); with 1 the passes still save their temporaries.

Where they pay: see docs/PERFORMANCE.md (npformer train uses them unless --no-fast-elementwise).
"""
from __future__ import annotations

import types

from npformer.fast.attention import mha_backward, mha_forward
from npformer.fast.methods import (
    activation_backward,
    activation_forward,
    dropout_module_backward,
    dropout_module_forward,
    layernorm_module_backward,
    layernorm_module_forward,
    loss_module_backward,
    loss_module_forward,
)
from npformer.guards.register import checked_backward
from npformer.guards.rules import check_positive_int
from npformer.layers.activations import Activation
from npformer.layers.attention import MultiHeadAttention
from npformer.layers.dropout import Dropout
from npformer.layers.layernorm import LayerNorm
from npformer.layers.loss import CrossEntropyLoss
from npformer.layers.module import Module

__all__ = ["accelerate", "restore_plain", "accelerated_threads", "FAST_METHODS"]


# module class -> (fast forward, fast backward); each backward wrapped as the class's own is (its
# registered gradient check first, the cache freed after): the fast methods check nothing themselves
FAST_METHODS = {
    Activation: (activation_forward, checked_backward(activation_backward)),
    LayerNorm: (layernorm_module_forward, checked_backward(layernorm_module_backward)),
    Dropout: (dropout_module_forward, checked_backward(dropout_module_backward)),
    MultiHeadAttention: (mha_forward, checked_backward(mha_backward)),
    CrossEntropyLoss: (loss_module_forward, checked_backward(loss_module_backward)),
}

_ATTRS = ("forward", "backward", "fast_threads")


def _check_module(name: str, module) -> Module:
    if not isinstance(module, Module):
        raise TypeError(f"{name}: expected an npformer Module (a model, a layer or a loss), got "
                        f"{type(module).__name__}")
    return module


def accelerate(module: Module, threads: int = 1) -> Module:
    """Bind the fast methods to every module of FAST_METHODS' classes in `module` (itself
    included), splitting each pass over `threads` threads; returns `module`. Calling it again
    changes the threads."""
    _check_module("module", module)
    threads = check_positive_int("threads", threads)     # NumPy integers too, kept as Python's
    for _, m in module.named_modules():
        methods = FAST_METHODS.get(type(m))
        if methods is None:
            continue
        object.__setattr__(m, "forward", types.MethodType(methods[0], m))
        object.__setattr__(m, "backward", types.MethodType(methods[1], m))
        object.__setattr__(m, "fast_threads", threads)
    return module


def restore_plain(module: Module) -> Module:
    """Undo accelerate: every module in `module` runs its class's methods again; returns it."""
    _check_module("module", module)
    for _, m in module.named_modules():
        for attr in _ATTRS:
            m.__dict__.pop(attr, None)
    return module


def accelerated_threads(module: Module) -> int | None:
    """The threads of the first accelerated module in `module`, None when there is none."""
    _check_module("module", module)
    for _, m in module.named_modules():
        if "fast_threads" in m.__dict__:
            return m.__dict__["fast_threads"]
    return None
