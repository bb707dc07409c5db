"""Right multi-head attention that takes its mask as (batch, Tq, Tk) and adds the head axis itself
(the Annotated Transformer's `mask.unsqueeze(1)`), saying so and refusing any other form with a
clear error: it does not take the (batch, 1, Tq, Tk) form, and says so on every call. Where the
assignment declares that form (`mask_rank = 3`) it matches with nothing left uncompared; where the
assignment leaves the form at (batch, 1, Tq, Tk), the oracle's probe finds the refusal, hands over
three axes and names that as the gap `mask_convention` (the twin of
oracle_hostile/rank_probe_refusal.py, which refuses only the probe's call)."""
import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    """forward(query, key, value, mask=None): mask (batch, Tq, Tk), nonzero = may attend."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.d_k = num_heads, d_model // num_heads
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d_model, d_model)
                                                                for _ in range(4))

    def _heads(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.h, self.d_k).transpose(1, 2)              # (B, H, T, d_k)

    def forward(self, query, key, value, mask=None):
        q, k, v = self._heads(self.q_proj(query)), self._heads(self.k_proj(key)), self._heads(self.v_proj(value))
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)                   # (B, H, Tq, Tk)
        if mask is not None:
            if mask.dim() != 3:
                raise ValueError(f"mask: expected (batch, Tq, Tk), got shape {tuple(mask.shape)}")
            s = s.masked_fill(mask.unsqueeze(1) == 0, float("-inf"))
        w = torch.softmax(s, dim=-1)
        o = (w @ v).transpose(1, 2).reshape(query.shape[0], -1, self.h * self.d_k)
        return self.out_proj(o), w
