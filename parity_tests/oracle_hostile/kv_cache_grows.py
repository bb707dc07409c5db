"""Hostile: a feed-forward block that keeps a running "memory" of every input it has seen and mixes
its mean into the output from the second call on (the shape of a key/value cache that is never
reset): right on a fresh instance's first call, wrong on every later one."""
import torch
from torch import nn


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0):
        super().__init__()
        self.w_1 = nn.Linear(d_model, d_ff)
        self.w_2 = nn.Linear(d_ff, d_model)
        self.memory = []

    def forward(self, x):
        past = [m for m in self.memory if m.shape == x.shape]
        self.memory.append(x.detach().clone())
        if past:
            x = x + 0.5 * torch.stack(past).mean(0)
        return self.w_2(torch.relu(self.w_1(x)))
