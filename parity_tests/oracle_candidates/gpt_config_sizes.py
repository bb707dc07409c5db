"""Parts of a small GPT built from one config dataclass every field of which is required: the width
is `embd_size` (nanoGPT's `n_embd` abbreviation beside a width word) and the layer count `n_layer`,
which no single layer reads. A causal self-attention over one packed q|k|v projection and a
feed-forward of fixed width 4 x embd_size. Correct versions and twins whose docstring says BUG."""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class SmallGPTConfig:
    vocab_size: int
    block_size: int
    embd_size: int
    n_heads: int
    n_layer: int
    dropout: float


class ConfigCausalAttention(nn.Module):
    def __init__(self, config: SmallGPTConfig):
        super().__init__()
        self.n_heads, self.width = config.n_heads, config.embd_size
        self.qkv = nn.Linear(config.embd_size, 3 * config.embd_size)
        self.proj = nn.Linear(config.embd_size, config.embd_size)
        self.drop = nn.Dropout(config.dropout)
        future = torch.ones(config.block_size, config.block_size).triu(1).bool()
        self.register_buffer("future", future)     # (block_size, block_size), True = hidden

    def scale(self, head_width: int) -> float:
        return math.sqrt(head_width)

    def forward(self, x):
        b, t, c = x.shape                          # (B, T, embd_size)
        dh = c // self.n_heads
        q, k, v = self.qkv(x).split(c, dim=-1)
        q, k, v = (z.view(b, t, self.n_heads, dh).transpose(1, 2) for z in (q, k, v))
        scores = q @ k.transpose(-2, -1) / self.scale(dh)        # (B, H, T, T)
        scores = scores.masked_fill(self.future[:t, :t], float("-inf"))
        out = self.drop(scores.softmax(-1)) @ v                   # (B, H, T, dh)
        return self.drop(self.proj(out.transpose(1, 2).reshape(b, t, c)))


class ConfigCausalAttentionModelScale(ConfigCausalAttention):
    """BUG: the scores are divided by sqrt(embd_size), not by sqrt of the head width."""

    def scale(self, head_width: int) -> float:
        return math.sqrt(self.width)


class ConfigFeedForward(nn.Module):
    def __init__(self, config: SmallGPTConfig):
        super().__init__()
        self.up = nn.Linear(config.embd_size, 4 * config.embd_size)
        self.down = nn.Linear(4 * config.embd_size, config.embd_size)
        self.drop = nn.Dropout(config.dropout)

    def forward(self, x):
        return self.drop(self.down(torch.relu(self.up(x))))


class ConfigFeedForwardNoActivation(ConfigFeedForward):
    """BUG: the activation is left out."""

    def forward(self, x):
        return self.drop(self.down(self.up(x)))
