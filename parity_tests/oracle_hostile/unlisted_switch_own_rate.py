"""Hostile: NumPy feed-forwards with a training switch of their own under a name the train mode
did not pass True (`use_dropout=True`, `apply_dropout=True`), wrong only with the switch on, the
default every caller in training gets: a dropout at a rate of its own (0.1, not the one it is
given), and a training path that leaves out the activation. Passed False, both compare right."""
import numpy as np


class FeedForwardUseDropoutOwnRate:
    def __init__(self, d_model, d_ff, dropout=0.1):
        self.W1, self.b1 = np.random.randn(d_model, d_ff) * 0.1, np.zeros(d_ff)
        self.W2, self.b2 = np.random.randn(d_ff, d_model) * 0.1, np.zeros(d_model)
        self.dropout = dropout

    def forward(self, x, use_dropout=True):
        h = np.maximum(0.0, x @ self.W1 + self.b1)                        # (B, T, d_ff)
        if use_dropout:
            h = h * np.random.binomial(1, 0.9, h.shape) / 0.9              # BUG: 0.1, not self.dropout
        return h @ self.W2 + self.b2


class FeedForwardApplyDropoutNoActivation(FeedForwardUseDropoutOwnRate):
    def forward(self, x, apply_dropout=True):
        if apply_dropout:                                                   # BUG: no ReLU here
            h = x @ self.W1 + self.b1
            keep = np.random.binomial(1, 1.0 - self.dropout, h.shape)
            return h * keep / (1.0 - self.dropout) @ self.W2 + self.b2
        return np.maximum(0.0, x @ self.W1 + self.b1) @ self.W2 + self.b2
