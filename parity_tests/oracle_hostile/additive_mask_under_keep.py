"""Hostile (for an assignment that fixes boolean keep-masks): a multi-head attention that adds its
mask to the scores, as Hugging Face layers do. Handed a 0/1 keep-mask it attends to hidden keys (a
boolean added to a score moves it by 1 at most). With the mask options at their defaults the oracle
adapts to it (masks handed over additive, correct for such a layer); an instructor whose spec says
`mask_convention = "keep"` got the same adaptation and a `match`, the declaration unread."""
import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.heads = num_heads
        self.wq, self.wk = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.wv, self.wo = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        split = (lambda t: t.view(B, T, self.heads, D // self.heads).transpose(1, 2))
        q, k, v = split(self.wq(x)), split(self.wk(x)), split(self.wv(x))
        s = q @ k.transpose(-1, -2) / math.sqrt(D // self.heads)
        if mask is not None:
            s = s + mask
        out = (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(B, T, D)
        return self.wo(out)
