"""Adam and AdamW as one fused pass over memory, clipping included: npformer.optim.adam's step, faster.

The plain step (npformer.optim.adam.adam_update) runs each of its operations over whole arrays: on a
large model every operation streams the parameter, its gradient or a moment through main memory, about
thirteen times per step, plus a temporary per operation. Clipping (npformer.optim.clip) adds a full
read-and-write pass over every gradient (`g *= coef`, applied even when coef is 1).

FusedAdam makes one pass over memory instead. Per parameter it walks cache-sized blocks of the
flattened arrays; on each block it runs the whole update, in the plain step's order, on three scratch
arrays that stay in cache (made once per worker thread, never per block), and optionally multiplies
the gradient block by the clipping coefficient first (in place: `.grad` ends clipped, as
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
import threading

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


class _Scratch(threading.local):
    """Three scratch arrays per worker thread and dtype, grown to the largest block seen."""

    def get(self, dtype: np.dtype, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        bufs = self.__dict__.setdefault("bufs", {})
        have = bufs.get(dtype)
        if have is None or have[0].size < n:
            have = bufs[dtype] = tuple(np.empty(n, dtype=dtype) for _ in range(3))
        return tuple(b[:n] for b in have)


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
        self._scale: float | None = None
        self._scratch = _Scratch()

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

    def _update_block(self, theta: np.ndarray, g: np.ndarray, m: np.ndarray, v: np.ndarray,
                      vmax: np.ndarray | None, t: float) -> None:
        """adam_update's operations on matching pieces of the arrays, in its order, in place on three
        scratch arrays: a, b temporaries, c the gradient plus the L2 term."""
        lr, (beta1, beta2), eps, wd = self.lr, self.betas, self.eps, self.weight_decay
        if theta.size <= max(self.BLOCK, self.BLOCK_THREADED):
            a, b, c = (s.reshape(theta.shape) for s in self._scratch.get(theta.dtype, theta.size))
        else:                                                    # a whole non-contiguous array: rare
            a, b, c = (np.empty_like(theta) for _ in range(3))
        if self._scale is not None:
            g *= self._scale                                     # clip: g <- coef g, in .grad
        if wd != 0:
            if self.DECOUPLED:
                theta *= 1 - lr * wd                             # theta <- (1 - gamma lambda) theta
            else:
                np.multiply(theta, wd, out=a)
                np.add(g, a, out=c)                              # g <- g + lambda theta
                g = c
        w = 1 - beta1
        np.subtract(g, m, out=a)                                 # g - m
        if abs(w) < 0.5:
            a *= w
            m += a                                               # m + w (g - m)
        else:
            a *= 1 - w
            np.subtract(g, a, out=m)                             # g - (g - m)(1 - w)
        v *= beta2
        np.multiply(g, 1 - beta2, out=a)
        a *= g
        v += a                                                   # beta2 v + ((1 - beta2) g) g
        step_size = lr / (1 - beta1 ** t)
        if vmax is not None:
            np.maximum(vmax, v, out=vmax)
            v = vmax
        np.sqrt(v, out=b)
        root = (1 - beta2 ** t) ** 0.5
        if root != 1.0:                                          # beta2^t below float64's eps/2 (t
            b /= root                                            # > 1800 at 0.98): x / 1 is x
        b += eps                                                 # sqrt(v / (1 - beta2^t)) + eps
        np.multiply(m, -step_size, out=a)
        a /= b
        theta += a                                               # theta - step_size m / denom


class FusedAdamW(FusedAdam, AdamW):
    """AdamW (decoupled weight decay, default 1e-2) with FusedAdam's one-pass, threaded step."""

    RULE = "AdamW"

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False,
                 threads: int | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, threads=threads)

