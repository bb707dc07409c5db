"""Multi-head attention splitting heads by `num_heads` and computing its scale from an optional
second count named like a head count, `score_heads=1` (1/sqrt(d_model), not 1/sqrt(d_model / H)).
If the oracle handed the drawn head count to every argument whose name reads as one, the default
would never run; it hands it to the one the binding names only, so the scale is compared."""
import math

from torch import nn


class SecondHeadCountScale(nn.Module):
    def __init__(self, d_model, num_heads, score_heads=1):
        super().__init__()
        self.h, self.scale = num_heads, 1.0 / math.sqrt(d_model // score_heads)
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def _split(self, t):                          # (B, T, D) -> (B, H, T, D / H)
        B, T, D = t.shape
        return t.view(B, T, self.h, D // self.h).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        q, k, v = self._split(self.q_proj(query)), self._split(self.k_proj(key)), self._split(self.v_proj(value))
        scores = q @ k.transpose(-1, -2) * self.scale
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        out = scores.softmax(-1) @ v
        B, H, T, w = out.shape
        return self.out_proj(out.transpose(1, 2).reshape(B, T, H * w))
