"""Fast forward/backward methods for npformer.layers' elementwise modules: Activation, LayerNorm,
Dropout and CrossEntropyLoss.

Each is the plain module's method (same cache, same attributes set) with the functional step
taken from npformer.fast (activations, layernorm, dropout, loss) on `self.fast_threads` threads.
Like the plain forward it checks nothing itself: Module.__call__ runs the class's check_inputs
once before it (a second check would be one more pass over every input). A case the fast step
does not cover (a replayed dropout mask, eval mode) runs the plain method.
npformer.fast.accelerate binds these to module instances.
"""
from __future__ import annotations

import numpy as np

from npformer.fast import activations as fast_act
from npformer.fast.dropout import draw_keep_mask
from npformer.fast.dropout import dropout_backward as fast_dropout_backward
from npformer.fast.dropout import dropout_forward as fast_dropout_forward
from npformer.fast.layernorm import layernorm_backward, layernorm_forward
from npformer.fast.loss import cross_entropy_backward, cross_entropy_forward

__all__ = ["activation_forward", "activation_backward", "layernorm_module_forward",
           "layernorm_module_backward", "dropout_module_forward", "dropout_module_backward",
           "loss_module_forward", "loss_module_backward"]


# -- Activation -------------------------------------------------------------------------------------
def activation_forward(self, x: np.ndarray) -> np.ndarray:
    y, cache = fast_act.FAST_PAIRS[self.name][0](x, self.fast_threads)
    self._cache = (cache, y)
    return y


def activation_backward(self, dout: np.ndarray) -> np.ndarray:
    cache, y = self._require_cache()
    return fast_act.FAST_PAIRS[self.name][1](dout, cache, self.fast_threads)


# -- LayerNorm --------------------------------------------------------------------------------------
def layernorm_module_forward(self, x: np.ndarray) -> np.ndarray:
    y, cache = layernorm_forward(x, self.weight.data, self.bias.data, self.eps, self.fast_threads)
    self._cache = (cache, y)
    return y


def layernorm_module_backward(self, dout: np.ndarray) -> np.ndarray:
    cache, y = self._require_cache()
    dx, dgamma, dbeta = layernorm_backward(dout, cache, self.fast_threads)
    self.weight.accumulate(dgamma)
    self.bias.accumulate(dbeta)
    return dx


# -- Dropout ----------------------------------------------------------------------------------------
def dropout_module_forward(self, x: np.ndarray) -> np.ndarray:
    """Dropout.forward; the mask drawn in blocks (the same mask and generator state)."""
    if not self.active or self._replay is not None:
        return type(self).forward(self, x)                  # identity or a replayed mask: plain
    mask = draw_keep_mask(self.rng, x.shape, self.p)        # (...) bool, P(keep) = 1 - p
    y, cache = fast_dropout_forward(x, self.p, mask, self.fast_threads)
    self.last_mask = mask
    self._cache = (cache, y)
    return y


def dropout_module_backward(self, dout: np.ndarray) -> np.ndarray:
    cache, y = self._require_cache()
    return fast_dropout_backward(dout, cache, self.fast_threads)


# -- CrossEntropyLoss -------------------------------------------------------------------------------
def loss_module_forward(self, logits: np.ndarray, targets: np.ndarray) -> np.ndarray:
    C = logits.shape[-1]
    loss, cache = cross_entropy_forward(logits.reshape(-1, C), targets.reshape(-1),
                                        self.ignore_index, self.label_smoothing, self.fast_threads)
    self._cache = (cache, logits.shape, loss)             # the loss last, as the plain module's
    return loss


def loss_module_backward(self, dout=1.0) -> np.ndarray:
    cache, shape, _ = self._require_cache()             # dout: checked (an array) by the guard
    return cross_entropy_backward(dout, cache, self.fast_threads).reshape(shape)
