"""Encoder-decoder models whose attention keeps bare parameters used as `x @ W`, as code ported from
NumPy or written from the paper's equations does: `SquareWeightsTransformer` holds four (d_model,
d_model) matrices per attention, stored (in, out); `HeadStackTransformer` one (d_model, d_head)
matrix per head for q, k and v, stacked as (heads, 1, d_model, d_head), and an (in, out) output
matrix. No attention biases. Their embeddings are not scaled (checked with scale_embeddings=false).
Our own code; the wrong twin says BUG."""
from __future__ import annotations

import math

import torch
from torch import nn


def sinusoid(length, d_model):
    pos = torch.arange(length, dtype=torch.float64)[:, None]                            # (L, 1)
    rate = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    table = torch.zeros(length, d_model, dtype=torch.float64)
    table[:, 0::2], table[:, 1::2] = torch.sin(pos * rate), torch.cos(pos * rate[: d_model // 2])
    return table                                                                        # (L, D)


def bare(*shape):
    return nn.Parameter(torch.randn(*shape) / math.sqrt(shape[-2]))


class SquareAttention(nn.Module):
    """softmax(x W_q (m W_k)^T / sqrt(d_head)) m W_v, heads merged, then W_o; every W (in, out)."""

    def __init__(self, d_model, n_heads, temperature=1.0):
        super().__init__()
        self.h = n_heads
        self.temperature = temperature
        self.W_q, self.W_k, self.W_v, self.W_o = (bare(d_model, d_model) for _ in range(4))

    def project(self, x, m):
        B, T, D = x.shape
        dk = D // self.h

        def heads(t):
            return t.view(B, -1, self.h, dk).transpose(1, 2)                              # (B, H, T, dk)
        return heads(x @ self.W_q), heads(m @ self.W_k), heads(m @ self.W_v)

    def forward(self, x, m, keep):
        B, T, D = x.shape
        q, k, v = self.project(x, m)
        s = q @ k.transpose(-2, -1) / (math.sqrt(q.shape[-1]) * self.temperature)      # (B, H, T, S)
        s = s.masked_fill(~keep, float("-inf"))
        return (s.softmax(-1) @ v).transpose(1, 2).reshape(B, T, D) @ self.W_o          # (B, T, D)


class HeadStackAttention(SquareAttention):
    """q, k, v through one (d_model, d_head) matrix per head: W_q (H, 1, D, d_head)."""

    def __init__(self, d_model, n_heads, temperature=1.0):
        super().__init__(d_model, n_heads, temperature)
        dk = d_model // n_heads
        del self.W_q, self.W_k, self.W_v
        self.W_q, self.W_k, self.W_v = (bare(n_heads, 1, d_model, dk) for _ in range(3))

    def project(self, x, m):
        def heads(t, W):
            return (t.unsqueeze(0) @ W).transpose(0, 1)                                   # (B, H, T, dk)
        return heads(x, self.W_q), heads(m, self.W_k), heads(m, self.W_v)


def feed_forward(d_model, d_ff):
    return nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))


class EncoderLayer(nn.Module):
    def __init__(self, attention, d_model, d_ff):
        super().__init__()
        self.attention = attention
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.ffn = feed_forward(d_model, d_ff)

    def forward(self, x, keep):
        x = self.norm1(x + self.attention(x, x, keep))
        return self.norm2(x + self.ffn(x))


class DecoderLayer(nn.Module):
    def __init__(self, attention, cross, d_model, d_ff):
        super().__init__()
        self.attention, self.cross_attention = attention, cross
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))
        self.ffn = feed_forward(d_model, d_ff)

    def forward(self, y, mem, self_keep, mem_keep):
        y = self.norm1(y + self.attention(y, y, self_keep))
        y = self.norm2(y + self.cross_attention(y, mem, mem_keep))
        return self.norm3(y + self.ffn(y))


class SquareWeightsTransformer(nn.Module):
    ATTENTION = SquareAttention
    TEMPERATURE = 1.0

    def __init__(self, src_vocab, tgt_vocab, d_model, n_heads, d_ff, n_layers, max_len=64):
        super().__init__()

        def attention():
            return self.ATTENTION(d_model, n_heads, self.TEMPERATURE)
        self.src_embedding = nn.Embedding(src_vocab, d_model)
        self.tgt_embedding = nn.Embedding(tgt_vocab, d_model)
        self.encoder_layers = nn.ModuleList(EncoderLayer(attention(), d_model, d_ff)
                                            for _ in range(n_layers))
        self.decoder_layers = nn.ModuleList(DecoderLayer(attention(), attention(), d_model, d_ff)
                                            for _ in range(n_layers))
        self.generator = nn.Linear(d_model, tgt_vocab)
        self.register_buffer("positions", sinusoid(max_len, d_model))

    def embed(self, table, ids):
        x = table(ids)
        return x + self.positions[: ids.shape[1]].to(x.dtype)                           # (B, T, D)

    def forward(self, src, tgt, src_mask, tgt_mask):
        x = self.embed(self.src_embedding, src)
        for layer in self.encoder_layers:
            x = layer(x, src_mask)
        y = self.embed(self.tgt_embedding, tgt)
        for layer in self.decoder_layers:
            y = layer(y, x, tgt_mask, src_mask)
        return self.generator(y)                                                        # (B, T, V)


class SquareWeightsTransformerBUG(SquareWeightsTransformer):
    """BUG: scores divided by 2 sqrt(d_head): wrong under either layout."""

    TEMPERATURE = 2.0


class HeadStackTransformer(SquareWeightsTransformer):
    ATTENTION = HeadStackAttention
