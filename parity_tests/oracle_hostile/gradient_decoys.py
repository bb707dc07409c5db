"""NumPy layer norms keeping two DIFFERENT sets of parameter gradients: the ones their own update
uses are wrong (the scale's not normalised, the shift's doubled), a right set sits beside them,
never used. The oracle used to pick the right set (a finite-difference test through the forward
chose among the unnamed arrays; the first name read won among named ones) and called both MATCH."""
import numpy as np


class _Norm:
    def __init__(self, features, eps=1e-5):
        self.scale, self.shift, self.eps = np.ones(features), np.zeros(features), eps

    def forward(self, x):
        self.x = x
        centred = x - x.mean(-1, keepdims=True)
        self.inv = 1.0 / np.sqrt((centred ** 2).mean(-1, keepdims=True) + self.eps)
        self.xn = centred * self.inv
        return self.scale * self.xn + self.shift

    def _backward(self, g):
        lead = tuple(range(g.ndim - 1))
        right = [(g * self.xn).sum(lead), g.sum(lead)]
        wrong = [(g * self.x).sum(lead), 2.0 * g.sum(lead)]
        gx = g * self.scale
        n = g.shape[-1]
        dx = self.inv / n * (n * gx - gx.sum(-1, keepdims=True)
                             - self.xn * (gx * self.xn).sum(-1, keepdims=True))
        return dx, right, wrong

    def step(self, lr):
        raise NotImplementedError


class UnnamedDecoys(_Norm):
    def backward(self, g):
        dx, right, wrong = self._backward(g)
        self.to_apply = wrong                 # what step() uses
        self.for_printing = right
        return dx

    def step(self, lr):
        self.scale -= lr * self.to_apply[0]
        self.shift -= lr * self.to_apply[1]


class NamedDecoys(_Norm):
    def backward(self, g):
        dx, right, wrong = self._backward(g)
        self.grads = {"scale": wrong[0], "shift": wrong[1]}     # what step() uses
        self.dscale, self.dshift = right                          # never used
        return dx

    def step(self, lr):
        self.scale -= lr * self.grads["scale"]
        self.shift -= lr * self.grads["shift"]
