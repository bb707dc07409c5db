"""A position-wise feed-forward built from the two linear layers handed in. Our own code."""
from __future__ import annotations

from torch import nn


class HandedFeedForwardLayer(nn.Module):
    def __init__(self, fc1, fc2, dr_rate=0):
        super().__init__()
        self.fc1, self.fc2 = fc1, fc2
        self.relu = nn.ReLU()
        self.dropout = nn.Dropout(dr_rate)

    def forward(self, x):
        return self.fc2(self.dropout(self.relu(self.fc1(x))))
