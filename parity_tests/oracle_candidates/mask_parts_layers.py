"""A post-norm decoder layer that takes its masks in parts named for what they are: the target's key
padding (batch, T), the causal mask (T, T) and the memory's key padding (batch, S), each 1 = attend,
and builds the masks its attentions use itself; our own code in that style. Wrong twins say BUG."""
from __future__ import annotations

import math

import torch
from torch import nn


class Attend(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads, self.d_head = n_heads, d_model // n_heads
        self.q, self.k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.v, self.o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, xq, xkv, allowed):
        B, Tq, _ = xq.shape

        def heads(t):
            return t.view(B, -1, self.n_heads, self.d_head).transpose(1, 2)

        s = heads(self.q(xq)) @ heads(self.k(xkv)).transpose(-1, -2) / math.sqrt(self.d_head)
        s = s.masked_fill(~allowed[:, None], float("-inf"))
        y = torch.softmax(s, dim=-1) @ heads(self.v(xkv))
        return self.o(y.transpose(1, 2).reshape(B, Tq, -1))


class PartsDecoderLayer(nn.Module):
    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.self_attn, self.cross_attn = Attend(d_model, n_heads), Attend(d_model, n_heads)
        self.ff1, self.ff2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
        self.ln1, self.ln2, self.ln3 = nn.LayerNorm(d_model), nn.LayerNorm(d_model), nn.LayerNorm(d_model)

    def allowed(self, tgt_pad_mask, tgt_causal_mask, memory_pad_mask, T):
        own = tgt_causal_mask.bool()[None] & tgt_pad_mask.bool()[:, None, :]
        return own, memory_pad_mask.bool()[:, None, :].expand(-1, T, -1)

    def forward(self, tgt, memory, tgt_pad_mask, tgt_causal_mask, memory_pad_mask):
        own, cross = self.allowed(tgt_pad_mask, tgt_causal_mask, memory_pad_mask, tgt.shape[1])
        x = self.ln1(tgt + self.self_attn(tgt, tgt, own))
        x = self.ln2(x + self.cross_attn(x, memory, cross))
        return self.ln3(x + self.ff2(torch.relu(self.ff1(x))))


class PartsDecoderLayerNoCausal(PartsDecoderLayer):
    """BUG: the causal part is taken and never applied."""

    def allowed(self, tgt_pad_mask, tgt_causal_mask, memory_pad_mask, T):
        own = tgt_pad_mask.bool()[:, None, :].expand(-1, T, -1)
        return own, memory_pad_mask.bool()[:, None, :].expand(-1, T, -1)


class PartsDecoderLayerMemoryPadIgnored(PartsDecoderLayer):
    """BUG: the memory's padding is never applied in the cross-attention."""

    def allowed(self, tgt_pad_mask, tgt_causal_mask, memory_pad_mask, T):
        own, cross = super().allowed(tgt_pad_mask, tgt_causal_mask, memory_pad_mask, T)
        return own, torch.ones_like(cross)
