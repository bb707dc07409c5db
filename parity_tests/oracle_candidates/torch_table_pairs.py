"""Torch positional modules holding two trainable tables of the positional shape: a learned table
beside a sinusoid parameter the module uses only when `fixed=True` (ViT code keeps both), and a
ViT embedding that prepends a learned class token before adding its learned positions (its output
is one row longer than its input: not the component). Our own code; the BUG twin looks positions up
one row late."""
from __future__ import annotations

import math

import torch
from torch import nn


def _sinusoid(max_len, d_model):
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    div = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(10000.0) / d_model))
    table = torch.zeros(max_len, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(pos * div)
    table[:, 1::2] = torch.cos(pos * div)[:, : d_model // 2]
    return table


class LearnedBesideFixedPositions(nn.Module):
    def __init__(self, d_model, max_len=64, fixed=False):
        super().__init__()
        self.fixed = fixed
        self.learned = nn.Parameter(torch.zeros(1, max_len, d_model))
        self.table = nn.Parameter(_sinusoid(max_len, d_model)[None].float())

    def start(self):
        return 0

    def forward(self, x):
        # x: (B, T, d_model)
        T = x.shape[1]
        pe = self.table if self.fixed else self.learned
        return x + pe[:, self.start(): self.start() + T]


class LearnedBesideFixedPositionsBUG(LearnedBesideFixedPositions):
    def start(self):
        return 1                        # one position late


class ClassTokenPositions(nn.Module):
    def __init__(self, num_patches, embed_dim):
        super().__init__()
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, num_patches + 1, embed_dim))

    def forward(self, x):
        # x: (B, N, D) -> (B, N + 1, D)
        cls = self.cls_token.expand(x.shape[0], -1, -1)
        x = torch.cat([cls, x], dim=1)
        return x + self.pos_embed[:, : x.shape[1]]
