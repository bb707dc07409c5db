"""Torch decoder layer whose forward takes the encoder's memory first and the decoder's input
second, under names that say neither (`forward(x, y, self_mask, cross_mask)`): only the code says
`x` is the memory, handed to the cross-attention beside `y` and used nowhere else. Test data for
parity_tests/test_oracle_memory_first_decoder_layer.py; the BUG twin differs in one line."""
import math

import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.heads, self.width = num_heads, d_model // num_heads
        self.q_proj, self.k_proj = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.v_proj, self.out_proj = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def _split(self, t):                        # (B, T, H*w) -> (B, H, T, w)
        return t.reshape(t.shape[0], t.shape[1], self.heads, -1).permute(0, 2, 1, 3)

    def forward(self, query, memory, mask=None):
        q, k = self._split(self.q_proj(query)), self._split(self.k_proj(memory))
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.width)   # (B, H, Tq, Tk)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        ctx = scores.softmax(-1) @ self._split(self.v_proj(memory))
        return self.out_proj(ctx.permute(0, 2, 1, 3).flatten(2))


class MemoryFirstDecoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.self_attn = Attention(d_model, num_heads)
        self.cross_attn = Attention(d_model, num_heads)
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))
        self.ffn = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))

    def forward(self, x, y, self_mask, cross_mask):
        y = self.norm1(y + self.self_attn(y, y, self_mask))
        y = self.norm2(y + self.cross_attn(y, x, cross_mask))
        return self.norm3(y + self.ffn(y))


class MemoryFirstDecoderLayerSelfKeysFromMemory(MemoryFirstDecoderLayer):
    """BUG: the self-attention reads its keys and values from the memory as well."""

    def forward(self, x, y, self_mask, cross_mask):
        y = self.norm1(y + self.self_attn(y, x, cross_mask))
        y = self.norm2(y + self.cross_attn(y, x, cross_mask))
        return self.norm3(y + self.ffn(y))
