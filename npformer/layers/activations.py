"""Elementwise activations: ReLU, exact GELU and GELU's tanh approximation, with their derivatives.

    relu(x)      = max(x, 0)                          relu'(x)      = 1 if x > 0 else 0
    gelu(x)      = x Phi(x)                           gelu'(x)      = Phi(x) + x phi(x)
    gelu_tanh(x) = x (1 + tanh(u)) / 2                gelu_tanh'(x) = (1 + t) / 2 + x (1 - t^2) u'(x) / 2
                   u = sqrt(2/pi) (x + 0.044715 x^3)                  t = tanh(u),
                                                                      u' = sqrt(2/pi) (1 + 3 * 0.044715 x^2)

Phi is the standard normal CDF, Phi(x) = erfc(-x / sqrt 2) / 2 (erfc from npformer.layers.special: the erfc
form has no cancellation for very negative x), phi(x) = exp(-x^2 / 2) / sqrt(2 pi) its density.
gelu is torch's GELU(approximate="none"), gelu_tanh is GELU(approximate="tanh") (GPT-2's). At x = 0
ReLU's gradient is 0, as in torch.
"""
import math
from typing import NamedTuple

import numpy as np

from npformer.layers.module import Module
from npformer.layers.special import erfc

_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_GELU_TANH_C = 0.044715


# -- ReLU ------------------------------------------------------------------------------------------
class ReluCache(NamedTuple):
    positive: np.ndarray   # (...) bool, x > 0: where the gradient passes


def relu_forward(x: np.ndarray):
    positive = x > 0                            # (...) bool
    return x * positive, ReluCache(positive)    # (...) x's dtype (bool multiplies exactly)


def relu_backward(dout: np.ndarray, cache: ReluCache) -> np.ndarray:
    return dout * cache.positive                # (...) 1 where x > 0, else 0


# -- exact GELU ------------------------------------------------------------------------------------
class GeluCache(NamedTuple):
    x: np.ndarray          # (...) the input
    cdf: np.ndarray        # (...) Phi(x)


def gelu_forward(x: np.ndarray):
    cdf = 0.5 * erfc(-x * _INV_SQRT2)           # (...) Phi(x)
    return x * cdf, GeluCache(x, cdf)           # (...) x Phi(x)


def gelu_backward(dout: np.ndarray, cache: GeluCache) -> np.ndarray:
    x, cdf = cache
    pdf = np.exp(-0.5 * x * x) * _INV_SQRT_2PI  # (...) phi(x)
    return dout * (cdf + x * pdf)               # (...) d/dx x Phi(x) = Phi(x) + x phi(x)


# -- GELU, tanh approximation ----------------------------------------------------------------------
class GeluTanhCache(NamedTuple):
    x: np.ndarray          # (...) the input
    t: np.ndarray          # (...) tanh(u), u = sqrt(2/pi) (x + 0.044715 x^3)


def gelu_tanh_forward(x: np.ndarray):
    u = _SQRT_2_OVER_PI * (x + _GELU_TANH_C * x * x * x)   # (...)
    t = np.tanh(u)                                         # (...)
    return 0.5 * x * (1.0 + t), GeluTanhCache(x, t)        # (...)


def gelu_tanh_backward(dout: np.ndarray, cache: GeluTanhCache) -> np.ndarray:
    x, t = cache
    du = _SQRT_2_OVER_PI * (1.0 + 3.0 * _GELU_TANH_C * x * x)        # (...) u'(x)
    return dout * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * du)   # (...) tanh' = 1 - tanh^2


# -- module ----------------------------------------------------------------------------------------
ACTIVATION_PAIRS = {
    "relu": (relu_forward, relu_backward),
    "gelu": (gelu_forward, gelu_backward),
    "gelu_tanh": (gelu_tanh_forward, gelu_tanh_backward),
}


class Activation(Module):
    """An elementwise activation chosen by name: "relu", "gelu" (exact) or "gelu_tanh"."""

    def __init__(self, name: str):
        super().__init__()
        self.name = name
        self._forward_fn, self._backward_fn = ACTIVATION_PAIRS[name]

    def forward(self, x: np.ndarray) -> np.ndarray:
        y, cache = self._forward_fn(x)              # (...)
        self._cache = (cache, y)
        return y

    def backward(self, dout: np.ndarray) -> np.ndarray:
        cache, _ = self._require_cache()
        return self._backward_fn(dout, cache)       # (...)

    def extra_repr(self) -> str:
        return repr(self.name)
