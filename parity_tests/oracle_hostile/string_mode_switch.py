"""Hostile: NumPy feed-forwards switched by a string (`forward(x, mode="train")`, the cs231n
style; `phase="test"`), wrong only on the side the default does not take: an inference path
scaled by 1 - rate, a training path without the ReLU. Left at its default in every run, the other
side never ran."""
import numpy as np


class FeedForwardModeTrain:
    def __init__(self, d_model, d_ff, dropout=0.1):
        self.W1, self.b1 = np.random.randn(d_model, d_ff) * 0.1, np.zeros(d_ff)
        self.W2, self.b2 = np.random.randn(d_ff, d_model) * 0.1, np.zeros(d_model)
        self.p = dropout

    def forward(self, x, mode="train"):
        h = np.maximum(0.0, x @ self.W1 + self.b1)                        # (B, T, d_ff)
        if mode == "train":
            h = h * np.random.binomial(1, 1.0 - self.p, h.shape) / (1.0 - self.p)
        else:
            h = h * (1.0 - self.p)                                        # BUG: eval scaled by 1 - p
        return h @ self.W2 + self.b2


class FeedForwardPhaseTest(FeedForwardModeTrain):
    def forward(self, x, phase="test"):
        if phase == "train":                                              # BUG: no ReLU here
            h = x @ self.W1 + self.b1
            return h * np.random.binomial(1, 1.0 - self.p, h.shape) / (1.0 - self.p) @ self.W2 + self.b2
        return np.maximum(0.0, x @ self.W1 + self.b1) @ self.W2 + self.b2
