"""Candidates taking no size at all: every width is a constant at the top of the file (course code
keeping its hyperparameters in one place, `EMBED_DIM = 256`, `4 * EMBED_DIM`), so the model width
and the feed-forward's hidden width are both fixed by the code. Correct unless the docstring says
BUG."""
import torch
import torch.nn as nn

EMBED = 12
HIDDEN = 4 * EMBED


class ConstantWidthFeedForward(nn.Module):
    """EMBED -> HIDDEN -> EMBED with ReLU, built from the constants alone."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(EMBED, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, EMBED))

    def forward(self, x):
        return self.net(x)


class ConstantWidthFeedForwardBUG(ConstantWidthFeedForward):
    """BUG: a ReLU after the down projection too."""

    def forward(self, x):
        return torch.relu(self.net(x))
