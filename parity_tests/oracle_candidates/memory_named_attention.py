"""Torch cross-attention whose forward names its inputs for what they are in a decoder:
`forward(decoder_x, encoder_output, mask=None)` (the decoder's states ask, the encoder's output
answers) and `forward(x, memory)`. Test data for parity_tests/test_oracle_memory_named_attention.py;
each BUG twin differs in one line."""
import math

import torch
from torch import nn


class CrossAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.nh, self.hd = num_heads, d_model // num_heads
        self.to_q, self.to_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.to_v, self.merge = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def _heads(self, t):
        return t.reshape(t.shape[0], t.shape[1], self.nh, self.hd).permute(0, 2, 1, 3)

    def forward(self, decoder_x, encoder_output, mask=None):
        q = self._heads(self.to_q(decoder_x))
        k = self._heads(self.to_k(encoder_output))
        v = self._heads(self.to_v(encoder_output))
        w = q @ k.transpose(-1, -2) / math.sqrt(self.hd)
        if mask is not None:
            w = w.masked_fill(~mask, float("-inf"))
        out = (w.softmax(-1) @ v).permute(0, 2, 1, 3).flatten(2)
        return self.merge(out)


class CrossAttentionValuesFromDecoder(CrossAttention):
    """BUG: the values are projected from the decoder's states instead of the encoder's output."""

    def forward(self, decoder_x, encoder_output, mask=None):
        q = self._heads(self.to_q(decoder_x))
        k = self._heads(self.to_k(encoder_output))
        v = self._heads(self.to_v(decoder_x))
        w = q @ k.transpose(-1, -2) / math.sqrt(self.hd)
        if mask is not None:
            w = w.masked_fill(~mask, float("-inf"))
        out = (w.softmax(-1) @ v).permute(0, 2, 1, 3).flatten(2)
        return self.merge(out)


class MemoryAttention(CrossAttention):
    """The same attention under `forward(x, memory)`, no mask."""

    def forward(self, x, memory):
        return super().forward(x, memory)
