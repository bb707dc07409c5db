"""Adam and AdamW as one fused pass over memory, clipping included: npformer.optim.adam's step, faster.

The plain step (npformer.optim.adam.adam_update) runs each of its operations over whole arrays: on a
large model every operation streams the parameter, its gradient or a moment through main memory, about
thirteen times per step, plus a temporary per operation. Clipping (npformer.optim.clip) adds a full
read-and-write pass over every gradient (`g *= coef`, applied even when coef is 1).

FusedAdam makes one pass over memory instead. Per parameter it walks cache-sized blocks of the
flattened arrays; on each block it runs the whole update, in the plain step's order, on three scratch
arrays that stay in cache (made once per worker thread, never per block: BlockedAdam's block
update, npformer.fast.adam), and optionally multiplies the gradient block by the clipping
coefficient first (in place: `.grad` ends clipped, as
clip_grad_norm leaves it). Counting, per block of n elements:

    main memory   theta, g, m, v read once; theta, m, v written once, and g too when clipped
                  (7n or 8n elements moved; the plain step moves about 32n, and the separate
                  clip pass another 2n; a coefficient of exactly 1 is skipped: g * 1 is g)
    in cache      13 elementwise sweeps (Adam), 14 (AdamW: the decay), 15 (Adam with L2 weight
                  decay), one more with amsgrad, one more with a clipping coefficient != 1, one
                  fewer once the second-moment correction 1 - beta2^t rounds to 1 (dividing by 1
                  changes no bit: after about 1800 steps at beta2 = 0.98)

Fewer in-cache sweeps would mean fewer roundings, that is other bits: every sweep is one of the
plain step's roundings, done in the same order, so the result is bit-equal to clip_grad_norm then
Adam/AdamW.step (tests/npformer/fast/test_fused_adam.py), whatever the block size and the threads.
Blocks are spread over `threads` worker threads (NumPy releases the GIL inside each sweep).

Not done, and why: updating a parameter as soon as its gradient is ready (during backward). The
training loop clips by the norm of *all* gradients and refuses to update at all when that norm is
not finite, so no update may start before the last gradient exists. What can go without a pass is
the copy of each gradient into `.grad`: npformer.fast.adopt_grad. And the zeroing of `.grad`
before each step: the parameters of a FusedAdam are switched to npformer.fast.lazy_grad's
LazyZeroParameter when it is made (the same gradients, the zeros written only when read).
"""
from __future__ import annotations

import math

import numpy as np

from npformer.fast.adam import BlockedAdam
from npformer.fast.adopt_grad import adopt_gradients
from npformer.fast.lazy_grad import lazy_zero_grad
from npformer.optim.adam import AdamW

__all__ = ["FusedAdam", "FusedAdamW", "clip_coefficient"]


def clip_coefficient(params, max_norm: float | None) -> tuple[float, float]:
    """(total L2 norm of the gradients, coef) exactly as npformer.optim.clip.clip_grad_norm computes
    them, without scaling anything: coef = min(max_norm / (N + 1e-6), 1), or 1 when max_norm is None.
    FusedAdam.step(grad_scale=coef) then applies the scaling inside its pass."""
    grads = [p.grad for _, p in params if p.grad is not None]
    if not grads:
        return 0.0, 1.0
    norms = np.array([np.linalg.norm(g.ravel(), ord=2.0) if g.size else 0.0 for g in grads],
                     dtype=np.float64)                           # (number of gradients,)
    total = float(np.linalg.norm(norms, ord=2.0))
    if max_norm is None:
        return total, 1.0
    return total, min(float(max_norm) / (total + 1e-6), 1.0)


class FusedAdam(BlockedAdam):
    """Adam whose step (clipping included) is one pass over memory, on `threads` worker threads.

    FusedAdam(params, lr, betas, eps, weight_decay, amsgrad, threads=None): Adam's arguments, plus
    `threads` (None: npformer.fast.adam.default_threads()). Results and state_dict are the plain
    Adam's (its state loads into either).

    step(grad_scale=None): with grad_scale = coef from clip_coefficient, the parameters, the state
    and `.grad` (scaled in place, block by block) end as after `clip_grad_norm(params, max_norm)`
    then the plain step.
    adopt_gradients(True): the model's gradients stop being copied into `.grad` (adopt_grad).
    """

    RULE = "Adam"

    def __init__(self, params, *args, threads: int | None = None, **kwargs) -> None:
        super().__init__(params, *args, threads=threads, **kwargs)
        lazy_zero_grad(self.params)                 # zero_grad() marks, the next gradient overwrites

    def adopt_gradients(self, on: bool = True) -> int:
        """Turn gradient adoption on (or off) for this optimizer's parameters; returns how many."""
        return adopt_gradients(self.params, on)

    def step(self, grad_scale: float | None = None) -> None:
        """One step on every parameter with a gradient, after `grad *= grad_scale` (None: 1)."""
        if grad_scale is not None and not (isinstance(grad_scale, (int, float, np.floating))
                                           and math.isfinite(grad_scale) and grad_scale >= 0):
            raise ValueError(f"{type(self).__name__}.step: grad_scale: expected a finite float >= 0 "
                             f"(clip_coefficient's coef) or None, got {grad_scale!r}")
        self._scale = None if grad_scale is None or float(grad_scale) == 1.0 else float(grad_scale)
        try:
            super().step()                       # checks, then _update queues the blocks and runs them
        finally:
            self._scale = None


class FusedAdamW(FusedAdam, AdamW):
    """AdamW (decoupled weight decay, default 1e-2) with FusedAdam's one-pass, threaded step."""

    RULE = "AdamW"

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False,
                 threads: int | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, threads=threads)

