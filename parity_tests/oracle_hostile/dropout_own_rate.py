"""Hostile: a feed-forward block that takes a dropout argument and ignores it, applying a dropout
of its own (0.3): in eval() it matches; in training it drops at a rate nobody asked for."""
import torch
from torch import nn


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.1):
        super().__init__()
        self.w_1 = nn.Linear(d_model, d_ff)
        self.w_2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(0.3)          # the given rate is ignored

    def forward(self, x):
        return self.w_2(self.dropout(torch.relu(self.w_1(x))))
