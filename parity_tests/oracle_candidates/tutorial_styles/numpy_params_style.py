"""NumPy classes in the course-assignment style: weights in self.params {'W_q': ..., 'b_q': ...},
gradients in self.grads, caches on self, forward/backward methods. Written for the oracle's reach
tests. Correct unless a docstring says BUG."""
import numpy as np


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))             # (..., Tk)
    return e / e.sum(-1, keepdims=True)


class MultiHeadAttention:
    """Weights (in, out): y = x @ W + b. forward(q, k, v, mask) -> out; backward(dout) -> dq, dk, dv."""

    def __init__(self, d_model, num_heads, seed=0):
        rng = np.random.default_rng(seed)
        self.h, self.dk = num_heads, d_model // num_heads
        self.params = {}
        for n in "qkvo":
            self.params[f"W_{n}"] = rng.standard_normal((d_model, d_model)) / np.sqrt(d_model)
            self.params[f"b_{n}"] = np.zeros(d_model)
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def _split(self, x):
        B, T, _ = x.shape
        return x.reshape(B, T, self.h, self.dk).transpose(0, 2, 1, 3)      # (B, h, T, dk)

    def _merge(self, x):
        B, h, T, dk = x.shape
        return x.transpose(0, 2, 1, 3).reshape(B, T, h * dk)                # (B, T, d)

    def forward(self, q, k, v, mask=None):
        p = self.params
        Q, K, V = (self._split(x @ p[f"W_{n}"] + p[f"b_{n}"]) for x, n in ((q, "q"), (k, "k"), (v, "v")))
        s = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(self.dk)                  # (B, h, Tq, Tk)
        if mask is not None:
            s = np.where(mask, s, -1e30)
        A = softmax(s)
        Z = self._merge(A @ V)                                              # (B, Tq, d)
        self.cache = (q, k, v, Q, K, V, A, Z)
        return Z @ p["W_o"] + p["b_o"]

    def _row_term(self, dA, A):
        return (dA * A).sum(-1, keepdims=True)                            # (B, h, Tq, 1)

    def backward(self, dout):
        q, k, v, Q, K, V, A, Z = self.cache
        p, g = self.params, self.grads
        d = Z.shape[-1]
        g["W_o"] = Z.reshape(-1, d).T @ dout.reshape(-1, d)
        g["b_o"] = dout.reshape(-1, d).sum(0)
        dZ = self._split(dout @ p["W_o"].T)                                 # (B, h, Tq, dk)
        dA = dZ @ V.transpose(0, 1, 3, 2)
        dV = A.transpose(0, 1, 3, 2) @ dZ
        ds = A * (dA - self._row_term(dA, A)) / np.sqrt(self.dk)             # (B, h, Tq, Tk)
        dQ, dK = ds @ K, ds.transpose(0, 1, 3, 2) @ Q
        out = []
        for x, dX, n in ((q, dQ, "q"), (k, dK, "k"), (v, dV, "v")):
            dX = self._merge(dX)
            g[f"W_{n}"] = x.reshape(-1, d).T @ dX.reshape(-1, d)
            g[f"b_{n}"] = dX.reshape(-1, d).sum(0)
            out.append(dX @ p[f"W_{n}"].T)
        return tuple(out)


class MultiHeadAttentionBadSoftmaxGrad(MultiHeadAttention):
    """BUG: the softmax backward forgets the subtraction term (ds = A * dA / sqrt(dk))."""

    def _row_term(self, dA, A):
        return 0.0


class LayerNorm:
    """params {'gamma', 'beta'}, grads {'gamma', 'beta'}."""

    def __init__(self, d_model, eps=1e-5):
        self.eps = eps
        self.params = {"gamma": np.ones(d_model), "beta": np.zeros(d_model)}
        self.grads = {}

    def forward(self, x):
        mu = x.mean(-1, keepdims=True)
        self.rstd = 1.0 / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + self.eps)
        self.xhat = (x - mu) * self.rstd
        return self.params["gamma"] * self.xhat + self.params["beta"]

    def backward(self, dout):
        axes = tuple(range(dout.ndim - 1))
        self.grads["gamma"] = (dout * self.xhat).sum(axes)
        self.grads["beta"] = dout.sum(axes)
        dxh = dout * self.params["gamma"]
        return self.rstd * (dxh - dxh.mean(-1, keepdims=True)
                            - self.xhat * (dxh * self.xhat).mean(-1, keepdims=True))


class LayerNormNoMeanTerm(LayerNorm):
    """BUG: backward drops the mean-of-gradient term."""

    def backward(self, dout):
        super().backward(dout)
        dxh = dout * self.params["gamma"]
        return self.rstd * (dxh - self.xhat * (dxh * self.xhat).mean(-1, keepdims=True))


class FeedForward:
    """Weights (out, in) like torch: W1 (d_ff, d_model); y = relu(x @ W1.T + b1) @ W2.T + b2."""

    def __init__(self, d_model, d_ff):
        rng = np.random.default_rng(1)
        self.params = {"W1": rng.standard_normal((d_ff, d_model)) * 0.1, "b1": np.zeros(d_ff),
                       "W2": rng.standard_normal((d_model, d_ff)) * 0.1, "b2": np.zeros(d_model)}
        self.grads = {}

    def forward(self, x):
        p = self.params
        self.x = x
        self.h = x @ p["W1"].T + p["b1"]                                   # (B, T, d_ff)
        self.a = np.maximum(self.h, 0)
        return self.a @ p["W2"].T + p["b2"]

    def backward(self, dout):
        p, g = self.params, self.grads
        D, Fh = p["W2"].shape
        g["W2"] = dout.reshape(-1, D).T @ self.a.reshape(-1, Fh)
        g["b2"] = dout.reshape(-1, D).sum(0)
        dh = (dout @ p["W2"]) * (self.h > 0)
        g["W1"] = dh.reshape(-1, Fh).T @ self.x.reshape(-1, D)
        g["b1"] = dh.reshape(-1, Fh).sum(0)
        return dh @ p["W1"]


class FeedForwardLeakyGrad(FeedForward):
    """BUG: backward lets gradient through where the pre-activation is zero or negative."""

    def backward(self, dout):
        h = self.h
        self.h = np.abs(h) + 1.0
        try:
            return super().backward(dout)
        finally:
            self.h = h


class MultiHeadAttentionOutIn(MultiHeadAttention):
    """The same computation with every matrix stored (out, in), y = x @ W.T + b."""

    def _swap(self, store):
        for n in "qkvo":
            store[f"W_{n}"] = store[f"W_{n}"].T.copy()

    def forward(self, q, k, v, mask=None):
        self._swap(self.params)                  # (in, out) while computing
        try:
            return super().forward(q, k, v, mask)
        finally:
            self._swap(self.params)

    def backward(self, dout):
        self._swap(self.params)
        try:
            grads = super().backward(dout)
        finally:
            self._swap(self.params)
        self._swap(self.grads)
        return grads
