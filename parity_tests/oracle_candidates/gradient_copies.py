"""NumPy layer norms whose backward keeps its parameter gradients in two places holding the SAME
values (an update list and a copy for printing; d<name> and a grads dict): either place may be read.
Each BUG twin keeps one wrong gradient in both places (test data for
parity_tests/test_oracle_gradient_copies.py)."""
import numpy as np


class _Norm:
    def __init__(self, features, eps=1e-5):
        self.scale, self.shift, self.eps = np.ones(features), np.zeros(features), eps

    def forward(self, x):
        centred = x - x.mean(-1, keepdims=True)
        self.inv = 1.0 / np.sqrt((centred ** 2).mean(-1, keepdims=True) + self.eps)
        self.xn = centred * self.inv
        return self.scale * self.xn + self.shift

    def _backward(self, g, shift_factor=1.0):
        lead = tuple(range(g.ndim - 1))
        g_scale, g_shift = (g * self.xn).sum(lead), shift_factor * g.sum(lead)
        gx = g * self.scale
        n = g.shape[-1]
        dx = self.inv / n * (n * gx - gx.sum(-1, keepdims=True)
                             - self.xn * (gx * self.xn).sum(-1, keepdims=True))
        return dx, g_scale, g_shift


class NormCopiedForPrinting(_Norm):
    def backward(self, g):
        dx, g_scale, g_shift = self._backward(g)
        self.pending = [g_scale, g_shift]
        self.printable = [g_scale.copy(), g_shift.copy()]
        return dx


class NormCopiedForPrinting_BUG(_Norm):
    """BUG: the shift's gradient is doubled, in both places."""

    def backward(self, g):
        dx, g_scale, g_shift = self._backward(g, shift_factor=2.0)
        self.pending = [g_scale, g_shift]
        self.printable = [g_scale.copy(), g_shift.copy()]
        return dx


class NormTwoNamesOneGradient(_Norm):
    def backward(self, g):
        dx, g_scale, g_shift = self._backward(g)
        self.dscale, self.dshift = g_scale, g_shift
        self.grads = {"scale": g_scale.copy(), "shift": g_shift.copy()}
        return dx


class NormTwoNamesOneGradient_BUG(_Norm):
    """BUG: the shift's gradient is doubled, under both names."""

    def backward(self, g):
        dx, g_scale, g_shift = self._backward(g, shift_factor=2.0)
        self.dscale, self.dshift = g_scale, g_shift
        self.grads = {"scale": g_scale.copy(), "shift": g_shift.copy()}
        return dx
