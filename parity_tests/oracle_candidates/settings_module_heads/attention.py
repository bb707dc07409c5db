# ruff: noqa: F403, F405
"""An attention taking no argument at all: its width and head count are globals star-imported from
the project's settings module. Correct unless the docstring says BUG."""
import math

import torch
from config_values import *
from torch import nn


class SettingsHeadsAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.wq, self.wk, self.wv, self.wo = (nn.Linear(model_width, model_width) for _ in range(4))

    def divisor(self):
        return math.sqrt(model_width // n_heads)

    def forward(self, q, k, v, mask=None):
        B, Tq, _ = q.shape

        def heads(t):                                             # (B, T, D) -> (B, h, T, dk)
            return t.view(B, t.shape[1], n_heads, model_width // n_heads).transpose(1, 2)

        scores = heads(self.wq(q)) @ heads(self.wk(k)).transpose(-2, -1) / self.divisor()
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        out = torch.softmax(scores, dim=-1) @ heads(self.wv(v))    # (B, h, Tq, dk)
        return self.wo(out.transpose(1, 2).reshape(B, Tq, model_width))


class SettingsHeadsAttentionBUG(SettingsHeadsAttention):
    """BUG: scores divided by sqrt(d_model), not sqrt(d_k)."""

    def divisor(self):
        return math.sqrt(model_width)
