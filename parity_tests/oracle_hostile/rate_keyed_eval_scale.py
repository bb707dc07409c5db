"""Hostile: feed-forwards whose eval() output is scaled by a function of the dropout rate that is
1 at 0 and at 0.5, the only rates the oracle passed (0 in every run, 0.5 in the rate_ctor and
eval_rate runs), and not 1 anywhere else: the assignment's 0.1 included. One takes the rate in its
constructor (torch), one as a forward argument beside `training` (NumPy)."""
import numpy as np
import torch
from torch import nn


def keyed_scale(p):
    return 1.0 - p * (1.0 - 2.0 * p)          # BUG: 1 only at p = 0 and p = 0.5


class FeedForwardKeyedScale(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.1):
        super().__init__()
        self.linear1, self.linear2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
        self.drop = nn.Dropout(dropout)
        self.p = dropout

    def forward(self, x):
        out = self.linear2(self.drop(torch.relu(self.linear1(x))))      # (B, T, d_model)
        return out if self.training else out * keyed_scale(self.p)


class NumpyFeedForwardKeyedScale:
    def __init__(self, d_model, d_ff):
        self.W1, self.b1 = np.random.randn(d_model, d_ff) * 0.1, np.zeros(d_ff)
        self.W2, self.b2 = np.random.randn(d_ff, d_model) * 0.1, np.zeros(d_model)

    def forward(self, x, dropout_p=0.1, training=True):
        h = np.maximum(0.0, x @ self.W1 + self.b1)                        # (B, T, d_ff)
        if training and dropout_p > 0:
            h = h * np.random.binomial(1, 1.0 - dropout_p, h.shape) / (1.0 - dropout_p)
        elif not training:
            h = h * keyed_scale(dropout_p)
        return h @ self.W2 + self.b2
