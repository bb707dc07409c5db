"""Hostile: a builder function (`make_ffn(d_model, d_ff, dropout=0.1)`, checked as a factory)
whose module scales its eval() output by 1 - rate. The rate_ctor run built classes only, so the
builder's rate was 0 in every run and the scale 1."""
import torch
from torch import nn


class _FeedForward(nn.Module):
    def __init__(self, d_model, d_ff, p):
        super().__init__()
        self.linear1, self.linear2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
        self.drop = nn.Dropout(p)
        self.keep = 1.0 - p

    def forward(self, x):
        out = self.linear2(self.drop(torch.relu(self.linear1(x))))      # (B, T, d_model)
        return out if self.training else out * self.keep                 # BUG: scaled in eval()


def make_ffn(d_model, d_ff, dropout=0.1):
    return _FeedForward(d_model, d_ff, dropout)
