"""Feed-forward blocks whose model width has a name the inner width could also have
(`hidden_size`, as tensor2tensor and Hugging Face call d_model) beside a name only the inner width
has (`filter_size`, `intermediate_size`). Each correct class has a twin whose docstring says BUG."""
from __future__ import annotations

import torch
import torch.nn as nn


class FilterSizeFeedForward(nn.Module):
    """tensor2tensor's naming: hidden_size the model width, filter_size the inner width."""

    def __init__(self, hidden_size, filter_size, dropout_rate):
        super().__init__()
        self.layer1 = nn.Linear(hidden_size, filter_size)
        self.dropout = nn.Dropout(dropout_rate)
        self.layer2 = nn.Linear(filter_size, hidden_size)

    def forward(self, x):
        return self.layer2(self.dropout(torch.relu(self.layer1(x))))


class FilterSizeFeedForwardBUG(FilterSizeFeedForward):
    """BUG: the inner activation is a sigmoid."""

    def forward(self, x):
        return self.layer2(self.dropout(torch.sigmoid(self.layer1(x))))


class IntermediateFeedForward(nn.Module):
    """Hugging Face's naming: hidden_size the model width, intermediate_size the inner width."""

    def __init__(self, hidden_size, intermediate_size):
        super().__init__()
        self.dense_in = nn.Linear(hidden_size, intermediate_size)
        self.dense_out = nn.Linear(intermediate_size, hidden_size)

    def forward(self, x):
        return self.dense_out(torch.relu(self.dense_in(x)))
