"""Hostile: attention whose mask fill is a name (`masked_fill(mask, neg)`) bound to a large negative
only inside another method; the `neg` the fill uses is the module's -1.0, so a hidden key keeps
most of its weight. The hidden-mask reading takes the name for the large negative (it reads names,
not scopes) and hands masks over True = hidden; what the fill does is still compared."""
import math

import torch
from torch import nn

neg = -1.0


class OtherScopeFill(nn.Module):
    def __init__(self, d_k):
        super().__init__()
        self.scale = 1.0 / math.sqrt(d_k)

    def half_precision_fill(self, scores):
        neg = torch.finfo(torch.float16).min
        return neg

    def forward(self, q, k, v, mask=None):
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.scale     # (B, H, Tq, Tk)
        if mask is not None:
            scores = scores.masked_fill(mask, neg)
        return torch.matmul(torch.softmax(scores, dim=-1), v)
