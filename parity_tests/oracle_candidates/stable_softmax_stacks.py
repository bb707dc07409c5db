"""Attention modules, layers (a pre-norm encoder layer among them) and a whole encoder-decoder
whose softmax subtracts each row's maximum before exp: right at any score, also past exp's float64
range (scores of thousands), where the oracle's large-score case puts them. Our own code. The BUG
twins take exp of the raw scores: exact on the scores of size 1 a search draws; past ~709 exp
overflows (inf / inf = NaN), below ~-745 a whole row underflows (0 / 0)."""
import math

import torch
from torch import nn


def softmax_rows(s):
    """softmax over the last axis, exp of the scores less their row maximum"""
    e = torch.exp(s - s.amax(-1, keepdim=True))
    return e / e.sum(-1, keepdim=True)


def softmax_raw(s):
    """BUG: softmax over the last axis as exp(s) / sum exp(s), no row maximum subtracted"""
    e = torch.exp(s)
    return e / e.sum(-1, keepdim=True)


class MultiHeadAttention(nn.Module):
    softmax = staticmethod(softmax_rows)

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.dk = num_heads, d_model // num_heads
        self.w_q, self.w_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.w_v, self.w_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        B = query.shape[0]

        def split(t):
            return t.view(B, -1, self.h, self.dk).transpose(1, 2)             # (B, H, T, dk)
        s = split(self.w_q(query)) @ split(self.w_k(key)).transpose(-2, -1) / math.sqrt(self.dk)
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        out = self.softmax(s) @ split(self.w_v(value))                          # (B, H, Tq, dk)
        return self.w_o(out.transpose(1, 2).reshape(B, -1, self.h * self.dk))


def feed_forward(d_model, d_ff):
    return nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))


class PreNormEncoderLayer(nn.Module):
    """x + attn(norm(x)), then x + ffn(norm(x)): the norms sit before the attention."""

    ATTENTION = MultiHeadAttention

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.attn, self.ffn = self.ATTENTION(d_model, num_heads), feed_forward(d_model, d_ff)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)

    def forward(self, x, mask=None):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, mask)
        return x + self.ffn(self.norm2(x))


class EncoderLayer(nn.Module):
    ATTENTION = MultiHeadAttention

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.attn, self.ffn = self.ATTENTION(d_model, num_heads), feed_forward(d_model, d_ff)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)

    def forward(self, x, mask=None):
        x = self.norm1(x + self.attn(x, x, x, mask))
        return self.norm2(x + self.ffn(x))


class DecoderLayer(nn.Module):
    ATTENTION = MultiHeadAttention

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.self_attn = self.ATTENTION(d_model, num_heads)
        self.cross_attn = self.ATTENTION(d_model, num_heads)
        self.ffn = feed_forward(d_model, d_ff)
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))

    def forward(self, x, memory, tgt_mask=None, memory_mask=None):
        x = self.norm1(x + self.self_attn(x, x, x, tgt_mask))
        x = self.norm2(x + self.cross_attn(x, memory, memory, memory_mask))
        return self.norm3(x + self.ffn(x))


def positions(T, d_model):
    pos = torch.arange(T, dtype=torch.float64)[:, None]                         # (T, 1)
    rate = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pe = torch.zeros(T, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * rate), torch.cos(pos * rate)
    return pe


class Transformer(nn.Module):
    ENCODER, DECODER = EncoderLayer, DecoderLayer

    def __init__(self, src_vocab, tgt_vocab, d_model, num_heads, d_ff, num_layers, pad_id=0):
        super().__init__()
        self.d, self.pad = d_model, pad_id
        self.src_embed, self.tgt_embed = nn.Embedding(src_vocab, d_model), nn.Embedding(tgt_vocab, d_model)
        self.encoder = nn.ModuleList(self.ENCODER(d_model, num_heads, d_ff) for _ in range(num_layers))
        self.decoder = nn.ModuleList(self.DECODER(d_model, num_heads, d_ff) for _ in range(num_layers))
        self.generator = nn.Linear(d_model, tgt_vocab)

    def embed(self, table, ids):
        x = table(ids)
        return x * math.sqrt(self.d) + positions(ids.shape[1], self.d).to(x.dtype)

    def forward(self, src, tgt):
        T = tgt.shape[1]
        src_keep = (src != self.pad)[:, None, None, :]                          # (B, 1, 1, S)
        tgt_keep = (tgt != self.pad)[:, None, None, :] & torch.ones(T, T, dtype=torch.bool).tril()
        x = self.embed(self.src_embed, src)
        for layer in self.encoder:
            x = layer(x, src_keep)
        y = self.embed(self.tgt_embed, tgt)
        for layer in self.decoder:
            y = layer(y, x, tgt_keep, src_keep)
        return self.generator(y)


class MultiHeadAttentionBUG(MultiHeadAttention):
    """BUG: exp of the raw scores."""

    softmax = staticmethod(softmax_raw)


class PreNormEncoderLayerBUG(PreNormEncoderLayer):
    """BUG: its attention takes exp of the raw scores."""

    ATTENTION = MultiHeadAttentionBUG


class EncoderLayerBUG(EncoderLayer):
    """BUG: its attention takes exp of the raw scores."""

    ATTENTION = MultiHeadAttentionBUG


class DecoderLayerBUG(DecoderLayer):
    """BUG: both attentions take exp of the raw scores."""

    ATTENTION = MultiHeadAttentionBUG


class TransformerBUG(Transformer):
    """BUG: every attention takes exp of the raw scores."""

    ENCODER, DECODER = EncoderLayerBUG, DecoderLayerBUG
