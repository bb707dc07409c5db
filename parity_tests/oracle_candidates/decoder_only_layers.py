"""Decoder-only (GPT-style) layers: masked self-attention and a feed-forward, no cross-attention,
the causal mask handed in by the caller, and a GPT-style model of them (TinyGPT). Our own code;
the BUG variant plants one mistake."""
from __future__ import annotations

import math

import torch
from torch import nn


class MaskedSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d_model, d_model) for _ in range(4))

    def forward(self, x, mask):
        B, T, D = x.shape
        q, k, v = (f(x).view(B, T, self.h, D // self.h).transpose(1, 2)
                   for f in (self.q_proj, self.k_proj, self.v_proj))
        s = q @ k.transpose(-2, -1) / math.sqrt(D // self.h)
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        return self.out_proj((torch.softmax(s, dim=-1) @ v).transpose(1, 2).reshape(B, T, D))


class CausalOnlyDecoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, eps=1e-5):
        super().__init__()
        self.self_attn = MaskedSelfAttention(d_model, num_heads)
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))
        self.ln_a, self.ln_b = nn.LayerNorm(d_model, eps=eps), nn.LayerNorm(d_model, eps=eps)

    def attend(self, x, mask):
        return self.self_attn(x, mask)

    def forward(self, tgt, tgt_mask=None):
        h = self.ln_a(tgt + self.attend(tgt, tgt_mask))
        return self.ln_b(h + self.ff(h))


class CausalOnlyDecoderLayerBUG(CausalOnlyDecoderLayer):
    def forward(self, tgt, tgt_mask=None):
        h = self.ln_a(tgt + self.attend(tgt, None))
        return self.ln_b(h + self.ff(h))


class TinyGPT(nn.Module):
    """A decoder-only language model of those layers: token and learned position tables, the
    layers under a causal mask, a final norm and a vocabulary head; forward(idx, targets=None)."""

    def __init__(self, vocab_size, d_model, num_heads, d_ff, num_layers, max_len=64):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab_size, d_model), nn.Embedding(max_len, d_model)
        self.layers = nn.ModuleList(CausalOnlyDecoderLayer(d_model, num_heads, d_ff)
                                    for _ in range(num_layers))
        self.ln_f, self.head = nn.LayerNorm(d_model), nn.Linear(d_model, vocab_size)

    def forward(self, idx, targets=None):
        T = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(T, device=idx.device))
        causal = torch.tril(torch.ones(T, T, dtype=torch.bool, device=idx.device))
        for layer in self.layers:
            x = layer(x, causal)
        return self.head(self.ln_f(x))
