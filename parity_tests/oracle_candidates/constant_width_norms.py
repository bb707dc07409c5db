"""Norms taking no size: the width they normalise is a constant at the top of the file, as course
code keeps it. Correct unless the docstring says BUG."""
import torch
from torch import nn

WIDTH = 16


class ConstantWidthNorm(nn.Module):
    def __init__(self, eps=1e-5):
        super().__init__()
        self.norm = nn.LayerNorm([WIDTH], eps=eps)

    def forward(self, x):
        return self.norm(x)


class ConstantWidthNormBUG(nn.Module):
    """BUG: divides by the unbiased standard deviation."""

    def __init__(self, eps=1e-5):
        super().__init__()
        self.gamma, self.beta, self.eps = nn.Parameter(torch.ones(WIDTH)), nn.Parameter(torch.zeros(WIDTH)), eps

    def forward(self, x):
        mean, var = x.mean(-1, keepdim=True), x.var(-1, keepdim=True)      # unbiased
        return self.gamma * (x - mean) / torch.sqrt(var + self.eps) + self.beta
