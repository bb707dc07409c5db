"""NumPy attention with a hand-written backward over bias-free projection parts that hold their
weight as `W` (computing x @ W) and its gradient under a private name `_dW`, exposed through a
`gradients` property dict, as course code writing every module as forward / backward does. The
attention has no biases at all; the same attention without any `gradients` dict. Correct versions
and twins whose docstring says BUG."""
import numpy as np


class _Projection:
    def __init__(self, d_in, d_out, bias=False):
        self.W = np.random.default_rng(d_in + d_out).standard_normal((d_in, d_out)) * 0.3
        self._dW = np.zeros_like(self.W)
        self._x = None

    def forward(self, x):
        self._x = x
        return x @ self.W

    def backward(self, dout):
        x = self._x.reshape(-1, self.W.shape[0])
        self._dW = x.T @ dout.reshape(-1, self.W.shape[1])
        return dout @ self.W.T

    @property
    def gradients(self):
        return {"W": self._dW}


class PrivateGradAttention:
    def __init__(self, d_model, n_heads):
        self.h, self.dk = n_heads, d_model // n_heads
        self.W_q = _Projection(d_model, d_model, bias=False)
        self.W_k = _Projection(d_model, d_model, bias=False)
        self.W_v = _Projection(d_model, d_model, bias=False)
        self.W_o = _Projection(d_model, d_model, bias=False)
        self._cache = {}

    def _split(self, z):
        b, t, _ = z.shape
        return z.reshape(b, t, self.h, self.dk).transpose(0, 2, 1, 3)

    def _merge(self, z):
        b, _, t, _ = z.shape
        return z.transpose(0, 2, 1, 3).reshape(b, t, self.h * self.dk)

    def _scale(self):
        return np.sqrt(self.dk)

    def forward(self, x, mask=None):
        q, k, v = (self._split(p.forward(x)) for p in (self.W_q, self.W_k, self.W_v))
        scores = q @ k.transpose(0, 1, 3, 2) / self._scale()
        if mask is not None:
            scores = np.where(mask == 0, -1e9, scores)
        scores = scores - scores.max(-1, keepdims=True)
        w = np.exp(scores)
        w = w / w.sum(-1, keepdims=True)
        self._cache = {"q": q, "k": k, "v": v, "w": w}
        return self.W_o.forward(self._merge(w @ v))

    def backward(self, dout):
        q, k, v, w = (self._cache[n] for n in "qkvw")
        dctx = self._split(self.W_o.backward(dout))
        dw = dctx @ v.transpose(0, 1, 3, 2)
        dv = w.transpose(0, 1, 3, 2) @ dctx
        ds = w * (dw - (dw * w).sum(-1, keepdims=True)) / self._scale()
        dq, dk = ds @ k, ds.transpose(0, 1, 3, 2) @ q
        return (self.W_q.backward(self._merge(dq)) + self.W_k.backward(self._merge(dk))
                + self.W_v.backward(self._merge(dv)))

    @property
    def gradients(self):
        return {f"{n}.W": getattr(self, n).gradients["W"] for n in ("W_q", "W_k", "W_v", "W_o")}


class PrivateGradAttentionWidthScale(PrivateGradAttention):
    """BUG: the scores are divided by sqrt(d_model), not sqrt(d_k) (forward and backward alike)."""

    def _scale(self):
        return np.sqrt(self.h * self.dk)


class _BareProjection(_Projection):
    gradients = None              # no gradient dict: `_dW` is all there is beside `W`

    def backward(self, dout):
        x = self._x.reshape(-1, self.W.shape[0])
        self._dW = self._weight_grad(x, dout.reshape(-1, self.W.shape[1]))
        return dout @ self.W.T

    def _weight_grad(self, x, dout):
        return x.T @ dout


class _TransposedGradProjection(_BareProjection):
    def _weight_grad(self, x, dout):
        return (x.T @ dout).T


class BareGradAttention(PrivateGradAttention):
    """The same attention, its parts keeping `_dW` with no `gradients` dict anywhere."""

    gradients = None
    part = _BareProjection

    def __init__(self, d_model, n_heads):
        super().__init__(d_model, n_heads)
        self.W_q, self.W_k, self.W_v, self.W_o = (self.part(d_model, d_model) for _ in range(4))


class BareGradAttentionTransposedGrad(BareGradAttention):
    """BUG: every projection's weight gradient is stored transposed (dout.T @ x, not x.T @ dout)."""

    part = _TransposedGradProjection
