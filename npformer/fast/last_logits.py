"""Next-token logits from the last position only, while decoding.

Greedy decoding, sampling and beam search read the logits of the last fed position alone, yet the
model's forward projects every fed position onto the vocabulary: when a prompt of P tokens is fed
at once (or the whole prefix, without a KV cache), P - 1 of those (d_model x vocab) products are
thrown away. On GPT-2 small that product is the largest GEMM of the model (768 x 50257).

    use_last_position_logits(model)     decoding of `model` projects the last position only
    last_position_logits_enabled(model) whether it is switched on
    last_position_only(model)           context manager the decode step runs the model under:
                                        while inside, model.output_proj (a Linear) returns
                                        (..., 1, V), the projection of x[..., -1:, :]

The switch is an instance attribute (the model's class and the learner's files are untouched);
npformer.decoding's NumPy step honours it. Outside the context manager the model is unchanged.

Equality with the plain decode: the last position's logits are the same dot products over
d_model, computed as a product of fewer rows. BLAS may block (and so sum) a product of different
row counts differently, so they agree to rounding, not always bit for bit: |difference| <= D * eps
* sum_i |h_i w_i| per logit (D = d_model, eps the dtype's machine epsilon), the bound any reordered
sum obeys, as npformer.fast.linear states for its few-rows form (tests/npformer/fast/ check it).
"""
from __future__ import annotations

import contextlib
import types

import numpy as np

from npformer.layers.linear import Linear
from npformer.layers.module import Module

__all__ = ["use_last_position_logits", "last_position_logits_enabled", "last_position_only",
           "has_output_proj", "ATTR"]

ATTR = "fast_last_logits"                 # the model's instance attribute that switches it on


def _output_proj(name: str, model) -> Linear:
    if not isinstance(model, Module):
        raise TypeError(f"{name}: expected an npformer model, got {type(model).__name__}")
    proj = getattr(model, "output_proj", None)
    if not isinstance(proj, Linear):
        raise TypeError(f"{name}: expected a model whose output_proj is a Linear (CausalLM, "
                        f"Transformer), got {type(model).__name__} with output_proj "
                        f"{type(proj).__name__}")
    return proj


def has_output_proj(model) -> bool:
    """Whether `model` can be switched: an npformer model whose output_proj is a Linear."""
    return isinstance(model, Module) and isinstance(getattr(model, "output_proj", None), Linear)


def use_last_position_logits(model, on: bool = True):
    """Switch last-position-only logits on (or off) for the decoding of `model`; returns it."""
    _output_proj("model", model)
    if not isinstance(on, bool):
        raise TypeError(f"on: expected a bool, got {on!r}")
    if on:
        object.__setattr__(model, ATTR, True)
    else:
        model.__dict__.pop(ATTR, None)
    return model


def last_position_logits_enabled(model) -> bool:
    return bool(getattr(model, "__dict__", {}).get(ATTR, False))


def _last_forward(self, x: np.ndarray) -> np.ndarray:
    """Linear.forward of the last position: (..., T, I) -> (..., 1, O)."""
    if x.ndim < 2:
        raise ValueError(f"x: expected (..., T, {self.in_features}) hidden states, got shape "
                         f"{x.shape}")
    b = None if self.bias is None else self.bias.data
    y, cache = self.functional(x[..., -1:, :], self.weight.data, b)   # (..., 1, O)
    self._cache = (cache, y)
    return y


@contextlib.contextmanager
def last_position_only(model):
    """Run the body with model.output_proj projecting the last position only, when the model has
    it switched on (use_last_position_logits); otherwise the body runs the plain model."""
    if not last_position_logits_enabled(model):
        yield model
        return
    proj = _output_proj("model", model)
    had = proj.__dict__.get("forward")
    object.__setattr__(proj, "forward", types.MethodType(_last_forward, proj))
    try:
        yield model
    finally:
        if had is None:
            proj.__dict__.pop("forward", None)
        else:
            object.__setattr__(proj, "forward", had)
