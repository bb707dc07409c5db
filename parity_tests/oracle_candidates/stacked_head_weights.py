"""Attention kept as one (d_model, d_head) matrix per head, stacked: `W_q` of shape (H, d, d_head)
(or (H, 1, d, d_head), broadcast over the batch by matmul), the output projection a bare square
(H * d_head, d) matrix used as `z @ W_o`, beside a feed-forward of nn.Linear layers; and a
constructor flag named in words (`mask_future_positions`, required). Right ones match; the BUG
twins do not (their bug is named in the class)."""
import math

import torch
from torch import nn


def _heads_out(z, w_o):
    b, h, t, e = z.shape                                   # (B, H, T, d_head)
    return z.transpose(1, 2).reshape(b, t, h * e) @ w_o   # (B, T, d)


class StackedHeadAttention(nn.Module):
    """q_h = x W_q[h]: einsum over the stacked (H, d, d_head) matrices."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        dh = d_model // num_heads
        self.W_q = nn.Parameter(torch.randn(num_heads, d_model, dh) / math.sqrt(d_model))
        self.W_k = nn.Parameter(torch.randn(num_heads, d_model, dh) / math.sqrt(d_model))
        self.W_v = nn.Parameter(torch.randn(num_heads, d_model, dh) / math.sqrt(d_model))
        self.W_o = nn.Parameter(torch.randn(num_heads * dh, d_model) / math.sqrt(d_model))

    def project(self, x, w):
        return torch.einsum("btd,hde->bhte", x, w)

    def scores(self, q, k):
        return q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])

    def forward(self, query, key, value, mask=None):
        q, k, v = (self.project(t, w) for t, w in ((query, self.W_q), (key, self.W_k),
                                                   (value, self.W_v)))
        s = self.scores(q, k)
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        return _heads_out(torch.softmax(s, dim=-1) @ v, self.W_o)


class StackedHeadAttentionBUG(StackedHeadAttention):
    """BUG: scores scaled by sqrt(d_model) instead of sqrt(d_head)."""

    def scores(self, q, k):
        return q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1] * q.shape[1])


class UnitAxisHeadAttention(StackedHeadAttention):
    """The same, each head's matrix kept as (H, 1, d, d_head) and applied by broadcasting matmul:
    (1, B, T, d) @ (H, 1, d, d_head) -> (H, B, T, d_head)."""

    def __init__(self, d_model, num_heads):
        super().__init__(d_model, num_heads)
        for name in ("W_q", "W_k", "W_v"):
            setattr(self, name, nn.Parameter(getattr(self, name).detach().unsqueeze(1).clone()))

    def project(self, x, w):
        return (x.unsqueeze(0) @ w).transpose(0, 1)


class FutureFlagAttention(StackedHeadAttention):
    """A required flag named in words: mask_future_positions=True hides later keys."""

    def __init__(self, d_model, num_heads, mask_future_positions):
        super().__init__(d_model, num_heads)
        self.future = mask_future_positions

    def scores(self, q, k):
        s = super().scores(q, k)
        if self.future:
            tq, tk = s.shape[-2:]
            s = s.masked_fill(~torch.ones(tq, tk, dtype=torch.bool).tril(tk - tq), float("-inf"))
        return s


class FutureFlagAttentionBUG(FutureFlagAttention):
    """BUG: the flag is taken and never used."""

    def scores(self, q, k):
        return StackedHeadAttention.scores(self, q, k)


class StackedHeadEncoderLayer(nn.Module):
    """Post-norm encoder layer: the stacked attention beside an nn.Linear feed-forward."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.self_attn = StackedHeadAttention(d_model, num_heads)
        self.fc1, self.fc2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)

    def forward(self, x, mask=None):
        x = self.norm1(x + self.self_attn(x, x, x, mask))
        return self.norm2(x + self.fc2(torch.relu(self.fc1(x))))
