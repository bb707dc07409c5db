"""NumPy modules with a hand-written backward that keep their parameter gradients under names of
their own (test data for parity_tests/test_oracle_grad_names.py). Weights are (in, out): check with
--weight-layout in_out. Each BUG is in a gradient only; the forward is right everywhere."""
import numpy as np


class _FFN:
    def __init__(self, d_model, d_ff):
        rng = np.random.default_rng(1)
        self.W1 = rng.standard_normal((d_model, d_ff)) * 0.1
        self.b1 = np.zeros(d_ff)
        self.W2 = rng.standard_normal((d_ff, d_model)) * 0.1
        self.b2 = np.zeros(d_model)

    def forward(self, x):
        h = x @ self.W1 + self.b1
        a = np.maximum(h, 0.0)
        self.cache = (x, h, a)
        return a @ self.W2 + self.b2

    def _grads(self, dout, relu_grad=True):
        x, h, a = self.cache
        flat = lambda t: t.reshape(-1, t.shape[-1])  # noqa: E731
        gW2, gb2 = flat(a).T @ flat(dout), flat(dout).sum(0)
        dh = (dout @ self.W2.T) * ((h > 0) if relu_grad else 1.0)
        gW1, gb1 = flat(x).T @ flat(dh), flat(dh).sum(0)
        return (gW1, gb1, gW2, gb2), dh @ self.W1.T


class DeltaFFN(_FFN):
    """Gradients as `<name>_delta` attributes."""

    def backward(self, dout):
        (self.W1_delta, self.b1_delta, self.W2_delta, self.b2_delta), dx = self._grads(dout)
        return dx


class OwnNamesFFN(_FFN):
    """Gradients in a list whose names say nothing, in reverse order."""

    def backward(self, dout):
        (gW1, gb1, gW2, gb2), dx = self._grads(dout)
        self.store = [gb2, gW2, gb1, gW1]
        return dx


class OwnNamesFFNBadGrad(_FFN):
    """BUG: the first layer's gradients miss the ReLU derivative (the forward is right)."""

    def backward(self, dout):
        (gW1, gb1, gW2, gb2), _ = self._grads(dout, relu_grad=False)
        _, dx = self._grads(dout)
        self.store = [gb2, gW2, gb1, gW1]
        return dx


class HiddenGradsFFN(_FFN):
    """Computes its gradients and keeps them nowhere the oracle can reach (a closure)."""

    def backward(self, dout):
        grads, dx = self._grads(dout)
        self.apply_update = lambda lr: [p - lr * g for p, g in
                                        zip((self.W1, self.b1, self.W2, self.b2), grads)]
        return dx


class _Norm:
    def __init__(self, d_model, eps=1e-5):
        self.scale, self.shift, self.eps = np.ones(d_model), np.zeros(d_model), eps

    def forward(self, x):
        mu = x.mean(-1, keepdims=True)
        inv = 1.0 / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + self.eps)
        self.cache = ((x - mu) * inv, inv)
        return self.scale * self.cache[0] + self.shift

    def _grads(self, dout):
        xhat, inv = self.cache
        lead = tuple(range(dout.ndim - 1))
        d = dout * self.scale
        D = dout.shape[-1]
        dx = inv / D * (D * d - d.sum(-1, keepdims=True) - xhat * (d * xhat).sum(-1, keepdims=True))
        return (dout * xhat).sum(lead), dout.sum(lead), dx


class GradientsDictNorm(_Norm):
    """Gradients in `self.gradients['dL/d<name>']`."""

    def backward(self, dout):
        gs, gb, dx = self._grads(dout)
        self.gradients = {"dL/dscale": gs, "dL/dshift": gb}
        return dx


class OwnNamesNorm(_Norm):
    """Gain and shift gradients (the same shape) under names that say nothing."""

    def backward(self, dout):
        gs, gb, dx = self._grads(dout)
        self.first_step, self.second_step = gb, gs
        return dx


class OwnNamesNormBadGrad(_Norm):
    """BUG: the gain's gradient forgets to multiply by the normalised input."""

    def backward(self, dout):
        _, gb, dx = self._grads(dout)
        self.first_step, self.second_step = gb, dout.sum(tuple(range(dout.ndim - 1)))
        return dx
