"""Gradients kept where backward made them, instead of copied into `.grad`: one pass fewer per step.

After `zero_grad()`, a LazyZeroParameter's (npformer.fast.lazy_grad) first `accumulate(g)` copies g
into its `.grad` array (a full read and write of the gradient). Every npformer layer hands
`accumulate` a gradient it has just made and never touches again (`dW = g2.T @ x2`, `np.add.at` into
fresh zeros, `g.sum(axis=0)`), so the copy can be skipped: the parameter takes that array as its
`.grad`. Later uses in the same step (a tied weight) still add into it, in place, as before: the
values are the same bits, only the array object behind `.grad` changes from step to step.

`adopt_gradients(params)` switches Parameters to AdoptingParameter (the same object, its class
changed; no data moves) and back. An array is taken only when it is safe to own: exactly the
parameter's shape and dtype, C-contiguous, writeable, owning its memory (not a view of something
else) and referenced by nobody but the caller. Anything else is copied, as before. The contract it
relies on, that a layer does not write into a gradient after handing it over, holds for every
layer in npformer.layers; do not turn it on for a model whose gradients come from elsewhere (a
DataParallel's reduce hands over its replicas' own `.grad` arrays: training adopts only without
replicas).
"""
from __future__ import annotations

import sys

import numpy as np

from npformer.fast.lazy_grad import LazyZeroParameter
from npformer.layers.module import Parameter

__all__ = ["AdoptingParameter", "adopt_gradients", "can_adopt"]

# references to an array handed straight to accumulate by a caller that also names it in one local
# variable (the layers' `dW = ...; p.accumulate(dW)`): that variable, accumulate's argument, and
# getrefcount's own argument
_MAX_REFS = 3


def can_adopt(p: Parameter, g) -> bool:
    """Whether `g` may become p's gradient array without a copy (see the module's docstring)."""
    return (type(g) is np.ndarray and g.base is None and g.flags.c_contiguous
            and g.flags.writeable and g.flags.owndata and g.dtype == p.data.dtype
            and g.shape == p.data.shape and g is not p.data
            and sys.getrefcount(g) <= _MAX_REFS + 1)             # +1: can_adopt's own argument


class AdoptingParameter(LazyZeroParameter):
    """A Parameter whose first gradient after zero_grad() is taken as `.grad`, not copied into it."""

    def accumulate(self, g: np.ndarray) -> None:
        """Take g as `.grad` when the gradient is marked zero or was released (None) and g is
        safe to own; otherwise copy or add it as LazyZeroParameter does."""
        if (self.__dict__["grad"] is None or self.grad_is_zero) and can_adopt(self, g):
            self.grad = g                                        # the setter: no longer marked zero
            return
        LazyZeroParameter.accumulate(self, g)


def adopt_gradients(params, on: bool = True) -> int:
    """Make each Parameter of `params` (Parameters or (name, Parameter) pairs, plain or lazily
    zeroed) adopt its gradients (on=True) or copy them again (on=False: a LazyZeroParameter);
    returns how many changed."""
    changed = 0
    for item in params:
        p = item[1] if isinstance(item, tuple) else item
        if on and type(p) in (Parameter, LazyZeroParameter):
            p.__dict__.setdefault("grad_is_zero", False)        # a plain one has no mark yet
            p.__class__ = AdoptingParameter
            changed += 1
        elif not on and type(p) is AdoptingParameter:
            p.__class__ = LazyZeroParameter
            changed += 1
    return changed
