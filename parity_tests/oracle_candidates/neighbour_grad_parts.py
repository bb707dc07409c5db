"""NumPy attention with a hand-written backward whose projection parts keep their weight's gradient
under a name no naming pattern reads (`last_step`), zeros until the first backward. On an example
with one key the softmax is constant, so the query and key parts' gradients are exactly zero and
their `last_step` does not change in backward while the value and output parts' do. Correct
version and a twin whose docstring says BUG."""
import numpy as np


class _Part:
    def __init__(self, width, seed):
        self.W = np.random.default_rng(seed).standard_normal((width, width)) * 0.3
        self.b = np.zeros(width)
        self.last_step = np.zeros_like(self.W)       # the gradients, under names of their own
        self.last_shift = np.zeros_like(self.b)
        self._seen = None

    def forward(self, x):
        self._seen = x
        return x @ self.W + self.b

    def backward(self, dy):
        flat_x = self._seen.reshape(-1, self.W.shape[0])       # (B*T, d)
        flat_dy = dy.reshape(-1, self.W.shape[1])               # (B*T, d)
        self.last_step = self._weight_step(flat_x, flat_dy)
        self.last_shift = flat_dy.sum(0)
        return dy @ self.W.T

    def _weight_step(self, flat_x, flat_dy):
        return flat_x.T @ flat_dy


class _HalvedStepPart(_Part):
    def _weight_step(self, flat_x, flat_dy):
        return 0.5 * (flat_x.T @ flat_dy)


class StepKeptAttention:
    part = _Part

    def __init__(self, d_model, n_heads):
        self.n_heads, self.d_head = n_heads, d_model // n_heads
        self.query, self.key, self.value, self.out = (self.part(d_model, s) for s in (11, 12, 13, 14))
        self._kept = None

    def _heads(self, z):                      # (B, T, d) -> (B, h, T, d_head)
        b, t, _ = z.shape
        return z.reshape(b, t, self.n_heads, self.d_head).transpose(0, 2, 1, 3)

    def _joined(self, z):                     # (B, h, T, d_head) -> (B, T, d)
        b, _, t, _ = z.shape
        return z.transpose(0, 2, 1, 3).reshape(b, t, self.n_heads * self.d_head)

    def forward(self, x, mask=None):
        q, k, v = (self._heads(p.forward(x)) for p in (self.query, self.key, self.value))
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(self.d_head)
        if mask is not None:
            s = np.where(mask == 0, -1e9, s)
        e = np.exp(s - s.max(-1, keepdims=True))
        a = e / e.sum(-1, keepdims=True)
        self._kept = (q, k, v, a)
        return self.out.forward(self._joined(a @ v))

    def backward(self, dy):
        q, k, v, a = self._kept
        dctx = self._heads(self.out.backward(dy))
        da = dctx @ v.transpose(0, 1, 3, 2)
        dv = a.transpose(0, 1, 3, 2) @ dctx
        ds = a * (da - (da * a).sum(-1, keepdims=True)) / np.sqrt(self.d_head)
        dq, dk = ds @ k, ds.transpose(0, 1, 3, 2) @ q
        return (self.query.backward(self._joined(dq)) + self.key.backward(self._joined(dk))
                + self.value.backward(self._joined(dv)))


class StepKeptAttentionHalvedStep(StepKeptAttention):
    """BUG: every part's weight gradient is half what it should be."""

    part = _HalvedStepPart


class _StillPart(_Part):
    def backward(self, dy):              # the weight and bias steps are never written
        return dy @ self.W.T


class StepKeptAttentionStillQuery(StepKeptAttention):
    """BUG: the query part never writes its gradients (they stay zero whatever the example)."""

    def __init__(self, d_model, n_heads):
        super().__init__(d_model, n_heads)
        self.query = _StillPart(d_model, 11)
