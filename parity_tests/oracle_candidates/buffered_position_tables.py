"""A torch positional module holding a learned `nn.Parameter` table (used by default) beside a
sinusoid it registers as a buffer for `fixed=True`: the parameter is the sinusoid's slot, a `table`
gap. Twins whose docstring says BUG have one planted mistake."""
import math

import torch
from torch import nn


class BufferedPositions(nn.Module):
    def __init__(self, max_len, d_model, fixed=False):
        super().__init__()
        self.fixed = fixed
        self.learned = nn.Parameter(torch.randn(1, max_len, d_model) * 0.02)
        pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
        freq = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, d_model, dtype=torch.float64)
        pe[:, 0::2] = torch.sin(pos * freq)
        pe[:, 1::2] = torch.cos(pos * freq)[:, : d_model // 2]
        self.register_buffer("sinusoid", pe.unsqueeze(0))

    def forward(self, x):
        table = self.sinusoid if self.fixed else self.learned
        return x + table[:, : x.shape[1]].to(x.dtype)


class BufferedPositionsBUG(BufferedPositions):
    """BUG: the table is scaled by sqrt(d_model) before it is added."""

    def forward(self, x):
        table = self.sinusoid if self.fixed else self.learned
        return x + math.sqrt(x.shape[-1]) * table[:, : x.shape[1]].to(x.dtype)
