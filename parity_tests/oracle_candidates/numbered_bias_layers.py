"""A NumPy encoder layer whose feed-forward is written as two 1x1 convolutions: kernels `kern_c1`,
`kern_c2` and biases `bias1`, `bias2` named by number only, beside an attention with its own
arrays. Each bias belongs to the kernel of its number. Twins whose docstring says BUG have one
planted mistake. Forward only."""
import numpy as np


def _norm(x, g, b):
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * g + b


class Attention:
    def __init__(self, d_model, num_heads):
        self.h = num_heads
        self.Wq, self.Wk, self.Wv, self.Wo = (np.random.randn(d_model, d_model) * 0.1 for _ in range(4))
        self.bq, self.bk, self.bv, self.bo = (np.zeros(d_model) for _ in range(4))

    def forward(self, x):
        B, T, D = x.shape
        split = lambda t: t.reshape(B, T, self.h, D // self.h).transpose(0, 2, 1, 3)  # noqa: E731
        q, k, v = split(x @ self.Wq + self.bq), split(x @ self.Wk + self.bk), split(x @ self.Wv + self.bv)
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(D // self.h)
        a = np.exp(s - s.max(-1, keepdims=True))
        a = a / a.sum(-1, keepdims=True)
        return (a @ v).transpose(0, 2, 1, 3).reshape(B, T, D) @ self.Wo + self.bo


class ConvFeedForward:
    def __init__(self, d_model, d_ff):
        self.kern_c1, self.bias1 = np.random.randn(d_model, d_ff) * 0.1, np.zeros(d_ff)
        self.kern_c2, self.bias2 = np.random.randn(d_ff, d_model) * 0.1, np.zeros(d_model)

    def forward(self, x):
        return np.maximum(x @ self.kern_c1 + self.bias1, 0.0) @ self.kern_c2 + self.bias2


class ConvFeedForwardBUG(ConvFeedForward):
    """BUG: the first bias is added after the ReLU."""

    def forward(self, x):
        return (np.maximum(x @ self.kern_c1, 0.0) + self.bias1) @ self.kern_c2 + self.bias2


class NumberedBiasEncoderLayer:
    ffn_class = ConvFeedForward

    def __init__(self, d_model, num_heads, d_ff):
        self.mha, self.conv = Attention(d_model, num_heads), self.ffn_class(d_model, d_ff)
        self.gamma1, self.beta1 = np.ones(d_model), np.zeros(d_model)
        self.gamma2, self.beta2 = np.ones(d_model), np.zeros(d_model)

    def forward(self, x):
        x = _norm(x + self.mha.forward(x), self.gamma1, self.beta1)
        return _norm(x + self.conv.forward(x), self.gamma2, self.beta2)


class NumberedBiasEncoderLayerBUG(NumberedBiasEncoderLayer):
    """BUG: the feed-forward adds its first bias after the ReLU."""

    ffn_class = ConvFeedForwardBUG


class RowBiasFeedForward:
    """Biases kept as rows, `np.zeros((1, n))`, beside `weights1` / `weights2`, as code written for
    (T, d) inputs keeps them."""

    def __init__(self, d_model, d_ff):
        self.weights1, self.biases1 = np.random.randn(d_model, d_ff) * 0.1, np.zeros((1, d_ff))
        self.weights2, self.biases2 = np.random.randn(d_ff, d_model) * 0.1, np.zeros((1, d_model))

    def forward(self, x):
        return np.maximum(x @ self.weights1 + self.biases1, 0.0) @ self.weights2 + self.biases2


class RowBiasFeedForwardBUG(RowBiasFeedForward):
    """BUG: the second bias is added before the second matrix."""

    def forward(self, x):
        return (np.maximum(x @ self.weights1 + self.biases1, 0.0) + self.biases2[:, :1]) @ self.weights2 \
            + self.biases2


class RowBiasEncoderLayer(NumberedBiasEncoderLayer):
    ffn_class = RowBiasFeedForward


class RowBiasEncoderLayerBUG(NumberedBiasEncoderLayer):
    """BUG: the feed-forward adds part of its second bias before the second matrix."""

    ffn_class = RowBiasFeedForwardBUG
