"""A NumPy post-norm encoder layer (forward only) whose attention has no biases and whose norms keep
their gradient buffers in a PRIVATE dict beside their gain and shift (`self._grads = {"gamma":
zeros(d), "beta": zeros(d)}`), as code written for its own optimiser does. The right class has a
planted-bug twin (BUG)."""
import numpy as np


class Norm:
    def __init__(self, d):
        self.gamma, self.beta = np.ones(d), np.zeros(d)
        self._grads = {"gamma": np.zeros(d), "beta": np.zeros(d)}

    def forward(self, x):
        mu = x.mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) * self.gamma + self.beta


class BiasFreeAttention:
    def __init__(self, d, h):
        self.h = h
        self.Wq, self.Wk, self.Wv, self.Wo = (np.random.randn(d, d) / np.sqrt(d) for _ in range(4))

    def forward(self, x, mask=None):
        B, T, D = x.shape
        dh = D // self.h
        q, k, v = ((x @ W).reshape(B, T, self.h, dh).transpose(0, 2, 1, 3) for W in (self.Wq, self.Wk, self.Wv))
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dh)
        if mask is not None:
            s = np.where(mask, s, -1e30)
        a = np.exp(s - s.max(-1, keepdims=True))
        a = a / a.sum(-1, keepdims=True)
        return (a @ v).transpose(0, 2, 1, 3).reshape(B, T, D) @ self.Wo


class GradDictEncoderLayer:
    def __init__(self, d_model, num_heads, d_ff):
        self.attn = BiasFreeAttention(d_model, num_heads)
        self.ln1, self.ln2 = Norm(d_model), Norm(d_model)
        self.W1, self.b1 = np.random.randn(d_model, d_ff) / np.sqrt(d_model), np.zeros(d_ff)
        self.W2, self.b2 = np.random.randn(d_ff, d_model) / np.sqrt(d_ff), np.zeros(d_model)

    def ffn(self, x):
        return np.maximum(x @ self.W1 + self.b1, 0.0) @ self.W2 + self.b2

    def forward(self, x, mask=None):
        x = self.ln1.forward(x + self.attn.forward(x, mask))
        return self.ln2.forward(x + self.ffn(x))


class GradDictEncoderLayerBUG(GradDictEncoderLayer):
    def forward(self, x, mask=None):
        y = self.ln1.forward(x + self.attn.forward(x, mask))
        return self.ln2.forward(x + self.ffn(y))            # the second residual skips the first
