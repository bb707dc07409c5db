# ruff: noqa: F403, F405
"""Layers whose widths and dropout rate come from the project's settings module by a star import,
as course projects keep them (the attention takes only its head count). Correct unless the
docstring says BUG."""
import math

import torch
import torch.nn.functional as F
from hparams import *
from torch import nn


class SettingsFeedForward(nn.Module):
    """width -> ff_width -> width with ReLU, dropout after the activation at the settings' rate."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(width, ff_width)
        self.fc2 = nn.Linear(ff_width, width)
        self.drop = nn.Dropout(p_drop)

    def forward(self, x):
        return self.fc2(self.drop(torch.relu(self.fc1(x))))


class SettingsSelfAttention(nn.Module):
    """Multi-head attention, q, k, v and output projections, dropout on the attention weights
    drawn in the forward at the settings' rate; the head count is its one argument."""

    def __init__(self, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.q = nn.Linear(width, width)
        self.k = nn.Linear(width, width)
        self.v = nn.Linear(width, width)
        self.o = nn.Linear(width, width)

    def forward(self, query, key, value, mask=None):
        B, Tq, _ = query.shape
        Tk, dk = key.shape[1], width // self.n_heads

        def split(t, n):
            return t.view(B, n, self.n_heads, dk).transpose(1, 2)

        q, k, v = split(self.q(query), Tq), split(self.k(key), Tk), split(self.v(value), Tk)
        scores = q @ k.transpose(-2, -1) / math.sqrt(dk)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        weights = F.dropout(torch.softmax(scores, dim=-1), p_drop, self.training)
        return self.o((weights @ v).transpose(1, 2).reshape(B, Tq, width))


class SettingsSelfAttentionFixedRateBUG(SettingsSelfAttention):
    """BUG: its attention dropout is written as a number, 0.1, not the settings' rate."""

    def forward(self, query, key, value, mask=None):
        B, Tq, _ = query.shape
        Tk, dk = key.shape[1], width // self.n_heads
        q = self.q(query).view(B, Tq, self.n_heads, dk).transpose(1, 2)
        k = self.k(key).view(B, Tk, self.n_heads, dk).transpose(1, 2)
        v = self.v(value).view(B, Tk, self.n_heads, dk).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(dk)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        weights = F.dropout(torch.softmax(scores, dim=-1), 0.1, self.training)
        return self.o((weights @ v).transpose(1, 2).reshape(B, Tq, width))
