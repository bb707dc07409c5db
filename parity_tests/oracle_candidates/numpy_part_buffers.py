"""NumPy layers in the style of small hand-written libraries (test data for
parity_tests/test_oracle_numpy_part_buffers.py): every weight keeps a zero gradient buffer beside
it from construction (`self.grad_W_q = np.zeros_like(self.W_q)`, filled in place by backward), and
a layer holds its dropouts as parts with a `training` flag and an `eval()` of their own while the
layer itself has neither. The twins plant a bug (unscaled scores, a GELU) or a dropout that no flag
turns off."""
import numpy as np


def _softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


class BufferedGradAttention:
    """Bias-free attention, `x @ W` matrices, gradient buffers made by the constructor."""

    def __init__(self, d_model, num_heads):
        rng = np.random.default_rng(0)
        self.h, self.dk = num_heads, d_model // num_heads
        self.W_q, self.W_k, self.W_v, self.W_o = (rng.standard_normal((d_model, d_model)) * 0.3
                                                  for _ in range(4))
        self.grad_W_q, self.grad_W_k, self.grad_W_v, self.grad_W_o = (
            np.zeros_like(w) for w in (self.W_q, self.W_k, self.W_v, self.W_o))

    def _split(self, t):                    # (B, T, d) -> (B, h, T, dk)
        b, n, _ = t.shape
        return t.reshape(b, n, self.h, self.dk).transpose(0, 2, 1, 3)

    def _merge(self, t):                    # (B, h, T, dk) -> (B, T, d)
        b, _, n, _ = t.shape
        return t.transpose(0, 2, 1, 3).reshape(b, n, self.h * self.dk)

    def _scale(self):
        return 1.0 / np.sqrt(self.dk)

    def forward(self, x, mask=None):
        q, k, v = (self._split(x @ w) for w in (self.W_q, self.W_k, self.W_v))
        s = q @ k.transpose(0, 1, 3, 2) * self._scale()
        if mask is not None:
            s = np.where(mask == 0, -1e9, s)
        a = _softmax(s)
        self.saved = (x, q, k, v, a)
        self.merged = self._merge(a @ v)
        return self.merged @ self.W_o

    def backward(self, dy):
        x, q, k, v, a = self.saved
        d = x.shape[-1]
        flat = lambda t: t.reshape(-1, d)  # noqa: E731
        self.grad_W_o[...] = flat(self.merged).T @ flat(dy)
        dctx = self._split(dy @ self.W_o.T)
        da, dv = dctx @ v.transpose(0, 1, 3, 2), a.transpose(0, 1, 3, 2) @ dctx
        ds = a * (da - (da * a).sum(-1, keepdims=True)) * self._scale()
        dq, dk = ds @ k, ds.transpose(0, 1, 3, 2) @ q
        dq, dk, dv = self._merge(dq), self._merge(dk), self._merge(dv)
        for buf, g in zip((self.grad_W_q, self.grad_W_k, self.grad_W_v), (dq, dk, dv)):
            buf[...] = flat(x).T @ flat(g)
        return dq @ self.W_q.T + dk @ self.W_k.T + dv @ self.W_v.T


class BufferedGradAttentionUnscaled(BufferedGradAttention):
    """BUG: the scores are not scaled by 1/sqrt(d_k)."""

    def _scale(self):
        return 1.0


class Dropout:
    """Inverted dropout, active while `training` is True."""

    def __init__(self, p=0.1):
        self.p, self.training = p, True
        self.rng = np.random.default_rng()

    def __call__(self, x):
        if not self.training:
            return x
        return x * (self.rng.random(x.shape) >= self.p) / (1.0 - self.p)

    def eval(self):
        self.training = False


class AlwaysDropout(Dropout):
    """Drops whatever the mode: no flag turns it off."""

    def __call__(self, x):
        return x * (self.rng.random(x.shape) >= self.p) / (1.0 - self.p)


class _Linear:
    def __init__(self, rng, n_in, n_out):
        self.W, self.b = rng.standard_normal((n_in, n_out)) * 0.3, rng.standard_normal(n_out) * 0.1

    def __call__(self, x):
        return x @ self.W + self.b


class _Norm:
    def __init__(self, d):
        self.gamma, self.beta = np.ones(d), np.zeros(d)
        self.grad_gamma, self.grad_beta = np.zeros(d), np.zeros(d)

    def __call__(self, x):
        mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return self.gamma * (x - mu) / np.sqrt(var + 1e-5) + self.beta


class DropoutPartsEncoderLayer:
    """Post-norm encoder layer, forward only, dropouts (p=0.1) held as parts; no eval() of its own."""

    DROPOUT = Dropout

    def __init__(self, d_model, num_heads, d_ff):
        rng = np.random.default_rng(1)
        self.h, self.dk = num_heads, d_model // num_heads
        self.wq, self.wk, self.wv, self.wo = (_Linear(rng, d_model, d_model) for _ in range(4))
        self.fc1, self.fc2 = _Linear(rng, d_model, d_ff), _Linear(rng, d_ff, d_model)
        self.norm1, self.norm2 = _Norm(d_model), _Norm(d_model)
        self.dropout1, self.dropout2 = self.DROPOUT(0.1), self.DROPOUT(0.1)

    def _act(self, t):
        return np.maximum(t, 0.0)

    def _attend(self, x, mask):
        b, n, d = x.shape
        q, k, v = (f(x).reshape(b, n, self.h, self.dk).transpose(0, 2, 1, 3)
                   for f in (self.wq, self.wk, self.wv))
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(self.dk)
        if mask is not None:
            s = np.where(mask == 0, -1e9, s)
        ctx = _softmax(s) @ v
        return self.wo(ctx.transpose(0, 2, 1, 3).reshape(b, n, d))

    def forward(self, x, mask=None):
        x = self.norm1(x + self.dropout1(self._attend(x, mask)))
        return self.norm2(x + self.dropout2(self.fc2(self._act(self.fc1(x)))))


class DropoutPartsEncoderLayerGelu(DropoutPartsEncoderLayer):
    """BUG: a tanh GELU in the feed-forward instead of ReLU."""

    def _act(self, t):
        return 0.5 * t * (1 + np.tanh(np.sqrt(2 / np.pi) * (t + 0.044715 * t ** 3)))


class AlwaysDroppingEncoderLayer(DropoutPartsEncoderLayer):
    """Its dropouts have no mode: still random under the oracle."""

    DROPOUT = AlwaysDropout
