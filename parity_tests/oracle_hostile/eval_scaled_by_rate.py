"""Layers handing their constructor's dropout rate to nn.Dropout and scaling their eval() output by
1 - rate as well (dropout "undone" twice: nn.Dropout already rescales while training). Right at a
rate of 0, the only rate the oracle built them with, so they matched; in eval() at any other rate
their output is (1 - rate) times the layer's."""
import numpy as np
import torch
from torch import nn


class RateScaledFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.1):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
        self.drop = nn.Dropout(dropout)
        self.keep = 1.0 - dropout

    def forward(self, x):
        out = self.fc2(self.drop(torch.relu(self.fc1(x))))
        return out if self.training else out * self.keep


class RateScaledLayerNorm(nn.Module):
    """A norm taking a rate it hands to a dropout on its output (`p_out`, found by what the
    constructor does with it), its gain scaled by 1 - rate outside training."""

    def __init__(self, d_model, p_out=0.1, eps=1e-5):
        super().__init__()
        self.gamma, self.beta = nn.Parameter(torch.ones(d_model)), nn.Parameter(torch.zeros(d_model))
        self.eps, self.out = eps, nn.Dropout(p_out)
        self.keep = 1.0 - p_out

    def forward(self, x):
        mu, var = x.mean(-1, keepdim=True), x.var(-1, keepdim=True, unbiased=False)
        gain = self.gamma if self.training else self.gamma * self.keep
        return self.out(gain * (x - mu) / torch.sqrt(var + self.eps) + self.beta)


class NumpyRateScaledFeedForward:
    """The same in NumPy, with a `training` switch its eval() turns off (weights (in, out))."""

    def __init__(self, d_model, d_ff, dropout=0.1):
        self.W1, self.b1 = np.zeros((d_model, d_ff)), np.zeros(d_ff)
        self.W2, self.b2 = np.zeros((d_ff, d_model)), np.zeros(d_model)
        self.p, self.training = dropout, True

    def eval(self):
        self.training = False

    def forward(self, x):
        h = np.maximum(x @ self.W1 + self.b1, 0.0)
        if self.training and self.p > 0:
            h = h * (np.random.rand(*h.shape) >= self.p) / (1.0 - self.p)
        out = h @ self.W2 + self.b2
        return out if self.training else out * (1.0 - self.p)
