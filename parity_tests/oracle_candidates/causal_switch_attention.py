"""Torch self-attention whose forward takes a switch named `mask`, not a mask: `forward(inputs,
mask=True)`, where `if mask:` hides the future with a causal mask the code builds itself. Test data
for parity_tests/test_oracle_causal_switch_attention.py; the BUG twin differs in one line."""
import math

import torch
from torch import nn


def hide_future(scores):                      # (B, H, T, T) with later keys at -inf
    T = scores.shape[-1]
    keep = torch.tril(torch.ones(T, T, dtype=torch.bool, device=scores.device))
    return scores.masked_fill(~keep, float("-inf"))


class SwitchedAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.heads, self.width = num_heads, d_model // num_heads
        self.query = nn.Linear(d_model, d_model)
        self.key = nn.Linear(d_model, d_model)
        self.value = nn.Linear(d_model, d_model)
        self.proj = nn.Linear(d_model, d_model)

    def _split(self, t):                        # (B, T, H*w) -> (B, H, T, w)
        return t.reshape(t.shape[0], t.shape[1], self.heads, -1).permute(0, 2, 1, 3)

    def _scores(self, inputs):
        q, k = self._split(self.query(inputs)), self._split(self.key(inputs))
        return q @ k.transpose(-1, -2) / math.sqrt(self.width)     # (B, H, T, T)

    def _mix(self, scores, inputs):
        ctx = scores.softmax(-1) @ self._split(self.value(inputs))  # (B, H, T, w)
        return self.proj(ctx.permute(0, 2, 1, 3).flatten(2))

    def forward(self, inputs, mask=True):
        scores = self._scores(inputs)
        if mask:
            scores = hide_future(scores)
        return self._mix(scores, inputs)


class SwitchedAttentionUnscaled(SwitchedAttention):
    """BUG: the scores are not divided by the square root of the head width."""

    def forward(self, inputs, mask=True):
        scores = self._scores(inputs) * math.sqrt(self.width)
        if mask:
            scores = hide_future(scores)
        return self._mix(scores, inputs)


class SwitchedAttentionAlwaysCausal(SwitchedAttention):
    """BUG: the future is hidden even when the switch is off (whenever there is more than one token)."""

    def forward(self, inputs, mask=True):
        scores = self._scores(inputs)
        if mask or inputs.shape[1] > 1:
            scores = hide_future(scores)
        return self._mix(scores, inputs)
