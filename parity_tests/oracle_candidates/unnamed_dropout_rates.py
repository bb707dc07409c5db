"""Blocks whose dropout rate is a constructor argument under a name that does not say so (`p_d`,
`rate`), handed to `nn.Dropout` in the constructor, with a default of 0.1. Right unless BUG."""
import torch
from torch import nn


class UnnamedRateFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, p_d=0.1, bias=True):
        super().__init__()
        self.linear_1 = nn.Linear(d_model, d_ff, bias=bias)
        self.dropout = nn.Dropout(p_d)
        self.linear_2 = nn.Linear(d_ff, d_model, bias=bias)

    def forward(self, x):
        return self.linear_2(torch.relu(self.dropout(self.linear_1(x))))


class FixedRateFeedForwardBUG(UnnamedRateFeedForward):
    """BUG: its dropout ignores the rate it was given (fixed at 0.1 in the code)."""

    def __init__(self, d_model, d_ff, p_d=0.1, bias=True):
        super().__init__(d_model, d_ff, p_d, bias)
        self.dropout = nn.Dropout(0.1)


class UnnamedRateEncoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, rate=0.1, eps=1e-5):
        super().__init__()
        self.attn = nn.MultiheadAttention(d_model, num_heads, dropout=0.0, batch_first=True)
        self.ff = UnnamedRateFeedForward(d_model, d_ff, rate)
        self.norm1 = nn.LayerNorm(d_model, eps=eps)
        self.norm2 = nn.LayerNorm(d_model, eps=eps)
        self.drop1 = nn.Dropout(p=rate)
        self.drop2 = nn.Dropout(p=rate)

    def forward(self, x):
        x = self.norm1(x + self.drop1(self.attn(x, x, x, need_weights=False)[0]))
        return self.norm2(x + self.drop2(self.ff(x)))
