"""Layers handed the CLASS of a block, not a built block (dependency injection): the constructor
builds its attention and feed-forward itself, `attn_cls(d_model=..., heads=...)`. The argument says
so by its name (`attn_cls`, `ffn_factory`) or its annotation (`type[SelfAttention]`,
`Callable[..., nn.Module]`). Twins whose docstring says BUG have one planted mistake."""
from __future__ import annotations

from typing import Callable

import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self, d_model, heads):
        super().__init__()
        self.h, self.dk = heads, d_model // heads
        self.wq, self.wk, self.wv, self.wo = (nn.Linear(d_model, d_model) for _ in range(4))

    def forward(self, q_in, kv_in, mask=None):
        B, Tq, D = q_in.shape
        split = lambda t: t.view(B, -1, self.h, self.dk).transpose(1, 2)  # noqa: E731
        q, k, v = split(self.wq(q_in)), split(self.wk(kv_in)), split(self.wv(kv_in))
        s = q @ k.transpose(-2, -1) / self.dk ** 0.5
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        out = torch.softmax(s, dim=-1) @ v
        return self.wo(out.transpose(1, 2).reshape(B, Tq, D))


class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.lin1, self.lin2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.lin2(torch.relu(self.lin1(x)))


class ClassArgDecoderLayer(nn.Module):
    def __init__(self, d_model, heads, d_ff, attn_cls, ffn_factory):
        super().__init__()
        self.self_attn = attn_cls(d_model=d_model, heads=heads)
        self.cross_attn = attn_cls(d_model=d_model, heads=heads)
        self.ffn = ffn_factory(d_model, d_ff)
        self.n1, self.n2, self.n3 = nn.LayerNorm(d_model), nn.LayerNorm(d_model), nn.LayerNorm(d_model)

    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        x = self.n1(x + self.self_attn(x, x, tgt_mask))
        x = self.n2(x + self.cross_attn(x, memory, memory_mask))
        return self.n3(x + self.ffn(x))


class ClassArgDecoderLayerBUG(ClassArgDecoderLayer):
    """BUG: the cross-attention reads the decoder's own input as keys and values."""

    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        x = self.n1(x + self.self_attn(x, x, tgt_mask))
        x = self.n2(x + self.cross_attn(x, x, tgt_mask))
        return self.n3(x + self.ffn(x))


class AnnotatedClassEncoderLayer(nn.Module):
    def __init__(self, d_model: int, num_heads: int, d_ff: int, attention: type[Attention],
                 make_ffn: Callable[..., nn.Module]):
        super().__init__()
        self.attention = attention(d_model, num_heads)
        self.ffn = make_ffn(d_model, d_ff)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)

    def forward(self, x, mask=None):
        x = self.norm1(x + self.attention(x, x, mask))
        return self.norm2(x + self.ffn(x))


class AnnotatedClassEncoderLayerBUG(AnnotatedClassEncoderLayer):
    """BUG: the second residual adds the sublayer's input before the first norm."""

    def forward(self, x, mask=None):
        h = self.norm1(x + self.attention(x, x, mask))
        return self.norm2(x + self.ffn(h))
