"""NumPy feed-forward networks built from `Dense` parts that keep their matrix (in, out) and compute
x @ W + b, with a hand-written backward. Correct unless the docstring says BUG.
"""
import numpy as np


class Dense:
    """A fully connected part: w (n_in, n_out), b (n_out,)."""

    def __init__(self, n_out, n_in):
        rng = np.random.default_rng(0)
        self.w = rng.uniform(-1, 1, (n_in, n_out)) / np.sqrt(n_in)
        self.b = np.zeros(n_out)

    def forward(self, x):
        self.x = x
        return x @ self.w + self.b

    def backward(self, g):
        self.grad_w = np.einsum("bti,bto->io", self.x, g)
        self.grad_b = g.sum(axis=(0, 1))
        return g @ self.w.T


class DenseFeedForward:
    """relu(x W1 + b1) W2 + b2 from two Dense parts."""

    def __init__(self, d_model, d_ff):
        self.fc_1 = Dense(d_ff, d_model)
        self.fc_2 = Dense(d_model, d_ff)

    def act(self, h):
        return np.maximum(h, 0)

    def forward(self, x):
        self.h = self.fc_1.forward(x)
        return self.fc_2.forward(self.act(self.h))

    def backward(self, g):
        g = self.fc_2.backward(g)
        return self.fc_1.backward(g * (self.h > 0))


class DenseFeedForwardLeaky(DenseFeedForward):
    """BUG: a leaky ReLU (negative slope 0.1) instead of ReLU."""

    def act(self, h):
        return np.where(h > 0, h, 0.1 * h)

    def backward(self, g):
        g = self.fc_2.backward(g)
        return self.fc_1.backward(g * np.where(self.h > 0, 1.0, 0.1))


class BiasFreeDense(Dense):
    """A Dense part without a bias: x @ w."""

    def __init__(self, n_out, n_in):
        super().__init__(n_out, n_in)
        del self.b

    def forward(self, x):
        self.x = x
        return x @ self.w

    def backward(self, g):
        self.grad_w = np.einsum("bti,bto->io", self.x, g)
        return g @ self.w.T


class BiasFreeFeedForward(DenseFeedForward):
    """relu(x W1) W2 from two bias-free Dense parts."""

    def __init__(self, d_model, d_ff):
        self.fc_1 = BiasFreeDense(d_ff, d_model)
        self.fc_2 = BiasFreeDense(d_model, d_ff)


class BiasFreeFeedForwardLeaky(BiasFreeFeedForward):
    """BUG: a leaky ReLU (negative slope 0.1) instead of ReLU."""

    act = DenseFeedForwardLeaky.act
    backward = DenseFeedForwardLeaky.backward
