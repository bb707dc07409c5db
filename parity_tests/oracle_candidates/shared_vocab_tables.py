"""Encoder-decoder models that share their vocabulary tables, as the paper does (section 3.4): one
table for both embeddings and the output (`PaperTransformer`), the output tied to the target table
only (`OutputTiedTransformer`), one embedding module used for both sides with logits taken against
its table (`FunctionalTiedTransformer`). Their decoder layers call the cross-attention
`look_at_source`, a name no list holds, and the positions are a frozen parameter
(`requires_grad=False`) rather than a buffer. Our own code; the wrong twin says BUG."""
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


class Attention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.h = n_heads
        self.wq, self.wk, self.wv, self.wo = (nn.Linear(d_model, d_model) for _ in range(4))

    def forward(self, x, mem, keep):
        B, T, D = x.shape
        dk = D // self.h

        def heads(t):
            return t.view(B, -1, self.h, dk).transpose(1, 2)                              # (B, H, T, dk)
        s = heads(self.wq(x)) @ heads(self.wk(mem)).transpose(-2, -1) / math.sqrt(dk)
        s = s.masked_fill(~keep, float("-inf"))
        return self.wo((s.softmax(-1) @ heads(self.wv(mem))).transpose(1, 2).reshape(B, T, D))


def feed_forward(d_model, d_ff):
    return nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))


class EncoderLayer(nn.Module):
    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.attention = Attention(d_model, n_heads)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.ffn = feed_forward(d_model, d_ff)

    def forward(self, x, keep):
        x = self.norm1(x + self.attention(x, x, keep))
        return self.norm2(x + self.ffn(x))


class DecoderLayer(nn.Module):
    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.attention = Attention(d_model, n_heads)
        self.look_at_source = Attention(d_model, n_heads)
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))
        self.ffn = feed_forward(d_model, d_ff)

    def forward(self, y, mem, self_keep, mem_keep):
        y = self.norm1(y + self.attention(y, y, self_keep))
        y = self.norm2(y + self.look_at_source(y, mem, mem_keep))
        return self.norm3(y + self.ffn(y))


class PaperTransformer(nn.Module):
    """One table for the source and target embeddings and the pre-softmax projection."""

    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers, max_len=64):
        super().__init__()
        self.d, self.vocab_size = d_model, vocab_size
        self.encoder_layers = nn.ModuleList(EncoderLayer(d_model, n_heads, d_ff) for _ in range(n_layers))
        self.decoder_layers = nn.ModuleList(DecoderLayer(d_model, n_heads, d_ff) for _ in range(n_layers))
        self.positions = nn.Parameter(sinusoid(max_len, d_model), requires_grad=False)
        self.tables()

    def tables(self):
        self.src_embedding = nn.Embedding(self.vocab_size, self.d)
        self.tgt_embedding = nn.Embedding(self.vocab_size, self.d)
        self.generator = nn.Linear(self.d, self.vocab_size)
        self.tgt_embedding.weight = self.src_embedding.weight
        self.generator.weight = self.src_embedding.weight

    def embed(self, table, ids, scale=True):
        x = table(ids) * (math.sqrt(self.d) if scale else 1.0)
        return x + self.positions[: ids.shape[1]].to(x.dtype)                           # (B, T, D)

    def logits(self, y):
        return self.generator(y)                                                        # (B, T, V)

    def forward(self, src, tgt, src_mask, tgt_mask):
        x = self.embed(self.src_embedding, src)
        for layer in self.encoder_layers:
            x = layer(x, src_mask)
        y = self.embed(self.tgt_embedding, tgt)
        for layer in self.decoder_layers:
            y = layer(y, x, tgt_mask, src_mask)
        return self.logits(y)


class PaperTransformerBUG(PaperTransformer):
    """BUG: the target embeddings are not scaled by sqrt(d_model) (the source ones are)."""

    def forward(self, src, tgt, src_mask, tgt_mask):
        x = self.embed(self.src_embedding, src)
        for layer in self.encoder_layers:
            x = layer(x, src_mask)
        y = self.embed(self.tgt_embedding, tgt, scale=False)
        for layer in self.decoder_layers:
            y = layer(y, x, tgt_mask, src_mask)
        return self.logits(y)


class OutputTiedTransformer(PaperTransformer):
    """Tables of its own for source and target; the output projection uses the target's."""

    def tables(self):
        self.src_embedding = nn.Embedding(self.vocab_size, self.d)
        self.tgt_embedding = nn.Embedding(self.vocab_size, self.d)
        self.generator = nn.Linear(self.d, self.vocab_size)
        self.generator.weight = self.tgt_embedding.weight


class FunctionalTiedTransformer(PaperTransformer):
    """One embedding module called for both sides; logits against its table (no output bias)."""

    def tables(self):
        self.embedding = nn.Embedding(self.vocab_size, self.d)
        self.src_embedding = self.tgt_embedding = self.embedding

    def logits(self, y):
        return y @ self.embedding.weight.T                                              # (B, T, V)
