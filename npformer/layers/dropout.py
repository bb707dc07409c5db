"""Inverted dropout, with masks that can be recorded and replayed.

Training:  y = x * m / (1 - p),   m ~ Bernoulli(1 - p) elementwise (m = True keeps the entry)
Eval/p=0:  y = x                  (no mask is drawn, the generator does not advance)

Scaling the kept entries by 1/(1-p) at training time keeps E[y] = x, so evaluation needs no rescale
("inverted" dropout, as torch.nn.Dropout).

    dL/dx = dL/dy * m / (1 - p)

Masks are bool keep-masks of x's shape, `rng.random(x.shape) >= p`: the draw does not depend on x's
dtype, so float32 and float64 runs with one seed drop the same entries. `Dropout.last_mask` holds the
last forward's mask; `Dropout.replay(mask)` makes the next forward use a given one (for a whole model:
npformer.checks.dropout_masks, which gradient checks use).
"""
from typing import NamedTuple

import numpy as np

from npformer.layers.module import Module


# -- functional pair -------------------------------------------------------------------------------
class DropoutCache(NamedTuple):
    mask: np.ndarray | None  # bool keep-mask, x.shape; None = identity (nothing dropped)
    scale: np.floating       # 1 / (1 - p) in x's dtype


def dropout_forward(x: np.ndarray, p: float, mask: np.ndarray | None):
    """y = x * mask / (1 - p), the caller's mask; with mask None the identity."""
    scale = x.dtype.type(1.0 / (1.0 - p))                   # scalar in x's dtype: no upcast
    if mask is None:
        return x, DropoutCache(None, scale)                 # identity (eval, p == 0)
    y = x * mask * scale                                    # (...) x's dtype; dropped entries 0
    return y, DropoutCache(mask, scale)


def dropout_backward(dout: np.ndarray, cache: DropoutCache) -> np.ndarray:
    """dx = dout * mask / (1 - p): a kept entry passes its gradient scaled, a dropped one gets 0."""
    if cache.mask is None:
        return dout                                         # identity
    return dout * cache.mask * cache.scale                  # (...)


# -- module ----------------------------------------------------------------------------------------
class Dropout(Module):
    """Inverted dropout with drop probability `p`, masks drawn from the plain attribute `self.rng`
    (default_rng(0) unless given; a model gives all its Dropouts one generator, drawn in forward
    order)."""

    def __init__(self, p: float, rng: np.random.Generator | None = None):
        super().__init__()
        self.p = float(p)
        self.rng = rng if rng is not None else np.random.default_rng(0)
        self.last_mask: np.ndarray | None = None   # keep-mask of the last forward (None: identity)
        self._replay: np.ndarray | None = None     # mask queued by replay() for the next forward

    @property
    def active(self) -> bool:
        """True when forward drops entries (training mode and p > 0)."""
        return self.training and self.p > 0.0

    def replay(self, mask: np.ndarray) -> None:
        """Make the next forward use `mask` (bool, the input's shape; checked now and at that forward)
        instead of drawing one; used once, and the generator does not advance for it."""
        self._replay = self.checked("replay", mask)

    def forward(self, x: np.ndarray) -> np.ndarray:
        if not self.active:
            if self._replay is not None:
                raise RuntimeError("Dropout.forward: a replayed mask is queued but the module is "
                                   f"{'in eval mode' if not self.training else 'at p == 0'}, "
                                   "where it draws no mask; replay masks only into the same mode "
                                   "they were recorded in")
            self.last_mask = None
            y, cache = dropout_forward(x, self.p, None)     # identity
        else:
            if self._replay is not None:
                queued, self._replay = self._replay, None       # used once, also when refused
                mask = self.checked("replayed_mask", queued, x.shape)
            else:
                mask = self.rng.random(x.shape) >= self.p   # (...) bool, P(keep) = 1 - p
            y, cache = dropout_forward(x, self.p, mask)
            self.last_mask = mask
        self._cache = (cache, y)
        return y

    def backward(self, dout: np.ndarray) -> np.ndarray:
        cache, _ = self._require_cache()
        return dropout_backward(dout, cache)

    def extra_repr(self) -> str:
        return f"p={self.p}"
