"""Self-attention whose forward takes a switch under a mask's name, `forward(x, mask=True)`, and
hides the wrong keys when it is on (the diagonal too: a token never sees itself). Read as a causal
switch and passed False for multi-head attention (whose reference is not causal), the wrong path
never runs: the report must name masks as not compared, and a check requiring them is incomplete."""
import math

import torch
from torch import nn


class WrongFutureSwitch(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x, mask=True):
        B, T, D = x.shape
        q, k, v = (t.view(B, T, self.h, D // self.h).transpose(1, 2) for t in self.qkv(x).split(D, -1))
        scores = q @ k.transpose(-1, -2) / math.sqrt(D // self.h)
        if mask:                                  # BUG: strictly lower triangle, the diagonal hidden
            hidden = ~torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)
            scores = scores.masked_fill(hidden, -1e9)
        out = scores.softmax(-1) @ v
        return self.proj(out.transpose(1, 2).reshape(B, T, D))
