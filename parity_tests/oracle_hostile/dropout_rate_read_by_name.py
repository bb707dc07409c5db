"""Hostile: feed-forwards whose dropout rate is a module global read as a dropout's rate, and read
again as an inference scale (1 - p_drop in eval(), non-inverted dropout on top of inverted: wrong)
where the text does not name it as a plain name: through `globals()["p_drop"]`, or as an attribute
of its own module. Setting a global read only as a dropout's rate to 0.0 must not set these
(test_oracle_settings_module_rates.py)."""
import sys

import torch
from torch import nn

width = 12
ff_width = 24
p_drop = 0.1


class FeedForwardScaledByLookupBUG(nn.Module):
    """BUG: scales its output by 1 - p_drop in eval(), the rate looked up by its name."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(width, ff_width)
        self.fc2 = nn.Linear(ff_width, width)
        self.drop = nn.Dropout(p_drop)

    def forward(self, x):
        out = self.fc2(self.drop(torch.relu(self.fc1(x))))
        return out if self.training else out * (1 - globals()["p_drop"])


class FeedForwardScaledByAttributeBUG(FeedForwardScaledByLookupBUG):
    """BUG: the same scale, the rate read as an attribute of its own module."""

    def forward(self, x):
        out = self.fc2(self.drop(torch.relu(self.fc1(x))))
        return out if self.training else out * (1 - sys.modules[__name__].p_drop)
