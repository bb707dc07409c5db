"""Layers whose head count is a module-level constant, as paper-faithful code writes it (`H = 4`
at the top of the file, `D_FF = 32` beside it), with a constructor that takes only d_model. They
build only at d_model a multiple of H. `EvenWidthAttention` takes its head count and asks for an
even d_model besides: its head count is not fixed. Twins whose docstring says BUG have one planted
mistake."""
import math

import torch
from torch import nn

H = 4
D_FF = 32
N_HEADS = 2


class FixedHeadEncoderLayer(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.attn = nn.MultiheadAttention(d_model, H, batch_first=True)
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, D_FF), nn.ReLU(), nn.Linear(D_FF, d_model))

    def forward(self, x):
        x = self.ln1(x + self.attn(x, x, x, need_weights=False)[0])
        return self.ln2(x + self.ff(x))


class FixedHeadEncoderLayerBUG(FixedHeadEncoderLayer):
    """BUG: the feed-forward's residual is left out."""

    def forward(self, x):
        x = self.ln1(x + self.attn(x, x, x, need_weights=False)[0])
        return self.ln2(self.ff(x))


class FixedHeadAttention(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        assert d_model % N_HEADS == 0, "d_model must be divisible by the number of heads"
        self.d_head = d_model // N_HEADS
        self.q, self.k, self.v, self.o = (nn.Linear(d_model, d_model) for _ in range(4))

    def scores(self, q, k):
        return q @ k.transpose(-2, -1) / math.sqrt(self.d_head)

    def forward(self, query, key, value, mask=None):
        B, T, D = query.shape
        heads = lambda t: t.view(B, -1, N_HEADS, self.d_head).transpose(1, 2)  # noqa: E731
        q, k, v = heads(self.q(query)), heads(self.k(key)), heads(self.v(value))
        s = self.scores(q, k)
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        out = torch.softmax(s, dim=-1) @ v
        return self.o(out.transpose(1, 2).reshape(B, T, D))


class FixedHeadAttentionBUG(FixedHeadAttention):
    """BUG: the scores are scaled by 1/sqrt(d_model), not 1/sqrt(d_head)."""

    def scores(self, q, k):
        return q @ k.transpose(-2, -1) / math.sqrt(self.d_head * N_HEADS)


class EvenWidthAttention(FixedHeadAttention):
    """Takes its head count; asks for an even width besides (no fixed head count)."""

    def __init__(self, d_model, num_heads):
        nn.Module.__init__(self)
        assert d_model % 2 == 0 and d_model % num_heads == 0
        self.d_head = d_model // num_heads
        self.q, self.k, self.v, self.o = (nn.Linear(d_model, d_model) for _ in range(4))
