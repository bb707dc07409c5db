"""Feed-forward blocks whose forward takes its own training switch, on by default
(`forward(x, is_training=True)`, `forward(x, train_mode=True)`), that turns their dropout on: a
NumPy class with a dropout part of its own and a torch module using F.dropout. The rate is the
constructor's `dropout`. Wrong twins (suffix BUG): a dropout that never receives the switch, an
inference path leaving out the activation, and a dropout at a rate of its own."""
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


class SwitchedDropout:
    """Inverted dropout, on while `is_training`."""

    def __init__(self, rate=0.1):
        self.rate = rate

    def forward(self, x, is_training=True):
        if not is_training or self.rate == 0:
            return x
        keep = np.random.binomial(1, 1.0 - self.rate, x.shape)
        return x * keep / (1.0 - self.rate)


class SwitchFeedForward:
    """NumPy, (in, out) weights, x @ W; the switch handed to its dropout part."""

    def __init__(self, d_model, d_ff, dropout=0.1):
        self.W1 = np.random.randn(d_model, d_ff) * 0.1
        self.b1 = np.zeros(d_ff)
        self.W2 = np.random.randn(d_ff, d_model) * 0.1
        self.b2 = np.zeros(d_model)
        self.drop = SwitchedDropout(dropout)

    def forward(self, x, is_training=True):
        h = np.maximum(0.0, x @ self.W1 + self.b1)               # (B, T, d_ff)
        return self.drop.forward(h, is_training) @ self.W2 + self.b2


class SwitchFeedForwardBUG(SwitchFeedForward):
    """BUG: a dropout on the output, built at the part's default rate and never given the switch:
    it stays on at inference."""

    def forward(self, x, is_training=True):
        return SwitchedDropout().forward(super().forward(x, is_training))


class InferencePathFeedForwardBUG(SwitchFeedForward):
    """BUG: the path taken when not training leaves out the activation."""

    def forward(self, x, is_training=True):
        if not is_training:
            return (x @ self.W1 + self.b1) @ self.W2 + self.b2
        return super().forward(x, is_training)


class OwnRateSwitchFeedForwardBUG(SwitchFeedForward):
    """BUG: drops at a rate of its own (0.1), not the one it is given."""

    def __init__(self, d_model, d_ff, dropout=0.1):
        super().__init__(d_model, d_ff, dropout)
        self.drop = SwitchedDropout(0.1)


class ModeSwitchFeedForward(nn.Module):
    """torch: F.dropout switched by the forward's own `train_mode`, not by the module's mode."""

    def __init__(self, d_model, d_ff, dropout=0.1):
        super().__init__()
        self.up, self.down = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
        self.p = dropout

    def forward(self, x, train_mode=True):
        h = F.dropout(torch.relu(self.up(x)), p=self.p, training=train_mode)
        return self.down(h)
