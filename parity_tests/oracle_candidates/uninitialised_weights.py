"""NumPy causal self-attention whose constructor only reserves its weight arrays (to be loaded
later): `np.empty` memory in one class, NaN placeholders in another, so what a freshly built object
holds is not usable numbers. The math is correct; q|k|v packed (d, 3d), x @ W, the future masked
inside with a stored 0 / -inf table. Written for the oracle's tests. Correct unless a docstring
says BUG."""
import numpy as np


def softmax(z):
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


class EmptyWeightsAttention:
    def __init__(self, d_model, num_heads, max_len=64):
        self.d, self.h = d_model, num_heads
        self.w_qkv = self.reserve((d_model, 3 * d_model))
        self.b_qkv = self.reserve((3 * d_model,))
        self.w_out = self.reserve((d_model, d_model))
        self.b_out = self.reserve((d_model,))
        self.future = np.triu(np.full((max_len, max_len), -np.inf), 1)

    def reserve(self, shape):
        return np.empty(shape)

    def scale(self, head_width):
        return np.sqrt(head_width)

    def forward(self, x):
        b, t, _ = x.shape
        hw = self.d // self.h
        q, k, v = (x @ self.w_qkv + self.b_qkv).reshape(b, t, 3, self.h, hw).transpose(2, 0, 3, 1, 4)
        scores = q @ k.transpose(0, 1, 3, 2) / self.scale(hw) + self.future[:t, :t]
        heads = (softmax(scores) @ v).transpose(0, 2, 1, 3).reshape(b, t, self.d)
        return heads @ self.w_out + self.b_out


class PlaceholderWeightsAttention(EmptyWeightsAttention):
    """Unloaded weights marked NaN (what np.empty may hand back, made certain)."""

    def reserve(self, shape):
        return np.full(shape, np.nan)


class PlaceholderWeightsAttention_BUG(PlaceholderWeightsAttention):
    """BUG: scores divided by the head width instead of its square root."""

    def scale(self, head_width):
        return float(head_width)
