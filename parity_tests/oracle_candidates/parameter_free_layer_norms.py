"""A NumPy encoder layer written as one class, forward only, whose two layer norms have no gain
and shift (`(x - mean) / sqrt(var + eps)`, nothing more): bare projection matrices `W_q` ... `W_o`
with their biases, a ReLU feed-forward `W1, b1, W2, b2`, post-norm residuals, mask 1 = may attend.
The right class has a planted-bug twin (BUG) whose norms divide by the unbiased variance."""
import numpy as np


class ParameterFreeNormLayer:
    def __init__(self, d_model, num_heads, d_ff, eps=1e-5):
        rng = np.random.default_rng(0)
        self.h, self.dk, self.eps = num_heads, d_model // num_heads, eps
        for n in ("q", "k", "v", "o"):
            setattr(self, f"W_{n}", rng.standard_normal((d_model, d_model)) / np.sqrt(d_model))
            setattr(self, f"b_{n}", np.zeros(d_model))
        self.W1, self.b1 = rng.standard_normal((d_ff, d_model)) / np.sqrt(d_model), np.zeros(d_ff)
        self.W2, self.b2 = rng.standard_normal((d_model, d_ff)) / np.sqrt(d_ff), np.zeros(d_model)

    def variance(self, x):
        return x.var(axis=-1, keepdims=True)

    def norm(self, x):
        mean = x.mean(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(self.variance(x) + self.eps)

    def heads(self, t):                            # (B, T, D) -> (B, h, T, dk)
        B, T, _ = t.shape
        return t.reshape(B, T, self.h, self.dk).transpose(0, 2, 1, 3)

    def attention(self, x, mask):
        q = self.heads(x @ self.W_q.T + self.b_q)
        k = self.heads(x @ self.W_k.T + self.b_k)
        v = self.heads(x @ self.W_v.T + self.b_v)
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(self.dk)     # (B, h, T, T)
        if mask is not None:
            scores = np.where(mask == 0, -1e9, scores)
        scores = scores - scores.max(axis=-1, keepdims=True)
        weights = np.exp(scores)
        weights = weights / weights.sum(axis=-1, keepdims=True)
        B, _, T, _ = weights.shape
        merged = (weights @ v).transpose(0, 2, 1, 3).reshape(B, T, -1)
        return merged @ self.W_o.T + self.b_o

    def forward(self, x, mask=None):
        x = self.norm(x + self.attention(x, mask))
        hidden = np.maximum(0.0, x @ self.W1.T + self.b1)
        return self.norm(x + hidden @ self.W2.T + self.b2)


class ParameterFreeNormLayerBUG(ParameterFreeNormLayer):
    def variance(self, x):
        return x.var(axis=-1, keepdims=True, ddof=1)
