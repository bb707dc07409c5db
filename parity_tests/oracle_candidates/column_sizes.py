"""A torch feed-forward whose sizes are named as matrix columns: `ColumnsFeedForward(in_columns,
intermediate_columns, out_columns)`, the block's input width, its inner width and its output
width. The right class has a planted-bug twin (BUG) that applies its activation to the output too."""
import torch
from torch import nn


class ColumnsFeedForward(nn.Module):
    def __init__(self, in_columns: int, intermediate_columns: int, out_columns: int):
        super().__init__()
        self.first = nn.Linear(in_columns, intermediate_columns)
        self.second = nn.Linear(intermediate_columns, out_columns)

    def finish(self, y):
        return y

    def forward(self, x):
        return self.finish(self.second(torch.relu(self.first(x))))


class ColumnsFeedForwardBUG(ColumnsFeedForward):
    def finish(self, y):
        return torch.relu(y)
