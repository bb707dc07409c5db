"""GPT-2 style NumPy attention written as callable classes (a small base class, `__call__`), the
forward's one argument named `inputs`, q|k|v packed in one (d, 3d) matrix, every matrix kept
(in, out) and used as x @ W, the future masked inside, (output, weights) returned. Written for the
oracle's reach tests. Correct unless a docstring says BUG."""
import numpy as np


class Module:
    def load(self, arrays):
        for name, value in arrays.items():
            setattr(self, name, value)


class Dense(Module):
    def __init__(self, n_in, n_out):
        self.weight = np.random.randn(n_in, n_out) * 0.02
        self.bias = np.zeros(n_out)

    def __call__(self, inputs):
        return inputs @ self.weight + self.bias


def softmax(z):
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


class CausalAttention(Module):
    def __init__(self, width, heads):
        self.width, self.heads = width, heads
        self.c_attn = Dense(width, 3 * width)
        self.c_proj = Dense(width, width)

    def scale(self, head_width):
        return np.sqrt(head_width)

    def __call__(self, inputs):
        b, t = inputs.shape[0], inputs.shape[1]
        hw = self.width // self.heads
        qkv = self.c_attn(inputs).reshape(b, t, 3, self.heads, hw).transpose(2, 0, 3, 1, 4)
        q, k, v = qkv
        scores = q @ k.transpose(0, 1, 3, 2) / self.scale(hw)
        future = np.triu(np.ones((t, t)), 1) == 1
        weights = softmax(np.where(future, -np.inf, scores))
        heads = (weights @ v).transpose(0, 2, 1, 3).reshape(b, t, self.width)
        return self.c_proj(heads), weights


class CausalAttention_BUG(CausalAttention):
    """BUG: scores divided by the head width instead of its square root."""

    def scale(self, head_width):
        return float(head_width)
