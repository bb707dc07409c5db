"""Parameters whose zero_grad() costs nothing: the zeros are never written, the next gradient is.

The plain Parameter (npformer.layers.module) zeroes `.grad` in zero_grad() and adds the first
gradient of the next step to those zeros: two passes over every weight that only restart a sum.
LazyZeroParameter only marks the gradient as zero; its first `accumulate(g)` after the mark copies
g over the stale values, and later ones add as before. Reading `.grad` while it is marked writes
the zeros in then, so `.grad` always shows the true gradient, in the same array.

Equal to the plain Parameter: a copy of g and 0 + g are the same numbers, bit for bit, except one
case: 0.0 + (-0.0) is +0.0, so where g holds a negative zero the plain gradient holds a positive
one (equal as numbers; nothing downstream tells them apart but the sign bit).

`lazy_zero_grad(params)` switches Parameters to LazyZeroParameter (the same object, its class
changed; no data moves) and back. npformer.fast.fused_adam.FusedAdam, the optimizer training
picks, switches its parameters when it is made.
"""
from __future__ import annotations

import numpy as np

from npformer.layers.module import Parameter

__all__ = ["LazyZeroParameter", "lazy_zero_grad"]


class LazyZeroParameter(Parameter):
    """A Parameter whose zero_grad() only marks `.grad` as zero (see the module's docstring).

    Its state sits in the instance dict, as the plain Parameter's does, plus one flag, so a
    Parameter can switch to this class and back without moving data."""

    @property
    def grad(self) -> np.ndarray | None:
        d = self.__dict__
        if d["grad_is_zero"]:
            d["grad"][...] = 0                      # materialise the zeros on the first read
            d["grad_is_zero"] = False
        return d["grad"]

    @grad.setter
    def grad(self, value: np.ndarray | None) -> None:
        self.__dict__["grad"] = value
        self.__dict__["grad_is_zero"] = False

    @property
    def grad_is_zero(self) -> bool:
        """True while `.grad`'s array holds stale values that count as zeros."""
        return self.__dict__["grad_is_zero"]

    def zero_grad(self) -> None:
        """Mark the gradient as zero (the array stays the same object)."""
        d = self.__dict__
        if d["grad"] is not None:
            d["grad_is_zero"] = True

    def accumulate(self, g: np.ndarray) -> None:
        """grad += g, where a gradient marked zero is overwritten by g instead."""
        d = self.__dict__
        grad = d["grad"]
        if grad is None:                            # (set to None by the user): a fresh array
            d["grad"] = grad = np.empty_like(self.data)
            d["grad_is_zero"] = True
        if d["grad_is_zero"]:
            np.copyto(grad, g)
            d["grad_is_zero"] = False
        else:
            grad += g


def lazy_zero_grad(params, on: bool = True) -> int:
    """Switch each Parameter of `params` (Parameters or (name, Parameter) pairs) to LazyZeroParameter
    (on=True; subclasses of it, such as an adopting one, are left as they are) or back to the plain
    Parameter (on=False; a gradient marked zero is written as zeros first); returns how many
    changed."""
    changed = 0
    for item in params:
        p = item[1] if isinstance(item, tuple) else item
        if on and type(p) is Parameter:
            p.__dict__["grad_is_zero"] = False
            p.__class__ = LazyZeroParameter
            changed += 1
        elif not on and isinstance(p, LazyZeroParameter):
            p.grad                                  # noqa: B018  (writes the marked zeros in)
            p.__dict__.pop("grad_is_zero", None)
            p.__class__ = Parameter
            changed += 1
    return changed
