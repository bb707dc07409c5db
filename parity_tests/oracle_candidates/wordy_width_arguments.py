"""A feed-forward whose constructor names its widths in words no alias lists
(`FeedForward(embedding_width, feed_forward_size)`): `feed_forward_size` is the hidden width, not a
feed-forward block to build. Right unless BUG."""
import torch
from torch import nn


class WordyWidthFeedForward(nn.Module):
    def __init__(self, embedding_width, feed_forward_size):
        super().__init__()
        self.expand = nn.Linear(embedding_width, feed_forward_size)
        self.contract = nn.Linear(feed_forward_size, embedding_width)

    def forward(self, x):
        return self.contract(torch.relu(self.expand(x)))


class WordyWidthFeedForwardBUG(WordyWidthFeedForward):
    """BUG: the ReLU is applied after the second linear layer."""

    def forward(self, x):
        return torch.relu(self.contract(self.expand(x)))
