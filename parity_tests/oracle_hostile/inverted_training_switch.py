"""Hostile: NumPy feed-forwards whose forward takes a training switch of the opposite sense or off
by default (`deterministic=True`, Flax's spelling; `stochastic=False`; `deterministic=False`;
`is_training=False`),
wrong only on the path the oracle never took: left at its default, the training path without the
ReLU never ran, nor the inference path scaling by 1 - rate where the default is training."""
import numpy as np


class FeedForwardDeterministic:
    def __init__(self, d_model, d_ff, dropout=0.1):
        self.W1, self.b1 = np.random.randn(d_model, d_ff) * 0.1, np.zeros(d_ff)
        self.W2, self.b2 = np.random.randn(d_ff, d_model) * 0.1, np.zeros(d_model)
        self.dropout = dropout

    def forward(self, x, deterministic=True):
        if not deterministic:                                               # BUG: no ReLU here
            h = x @ self.W1 + self.b1                                       # (B, T, d_ff)
            keep = np.random.binomial(1, 1.0 - self.dropout, h.shape)
            return h * keep / (1.0 - self.dropout) @ self.W2 + self.b2
        return np.maximum(0.0, x @ self.W1 + self.b1) @ self.W2 + self.b2


class FeedForwardStochastic(FeedForwardDeterministic):
    def forward(self, x, stochastic=False):
        if stochastic:                                                      # BUG: no ReLU here
            h = x @ self.W1 + self.b1
            keep = np.random.binomial(1, 1.0 - self.dropout, h.shape)
            return h * keep / (1.0 - self.dropout) @ self.W2 + self.b2
        return np.maximum(0.0, x @ self.W1 + self.b1) @ self.W2 + self.b2


class FeedForwardTrainingByDefault(FeedForwardDeterministic):
    def forward(self, x, deterministic=False):
        h = np.maximum(0.0, x @ self.W1 + self.b1)
        if deterministic:
            return h * (1.0 - self.dropout) @ self.W2 + self.b2             # BUG: eval scaled by 1 - p
        keep = np.random.binomial(1, 1.0 - self.dropout, h.shape)
        return h * keep / (1.0 - self.dropout) @ self.W2 + self.b2


class FeedForwardIsTrainingOff(FeedForwardDeterministic):
    def forward(self, x, is_training=False):
        if is_training:                                                     # BUG: no ReLU here
            return (x @ self.W1 + self.b1) @ self.W2 + self.b2
        return np.maximum(0.0, x @ self.W1 + self.b1) @ self.W2 + self.b2
