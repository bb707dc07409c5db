"""An encoder-decoder taking its masks as Hugging Face does: key paddings of shape (batch, length),
1 = a real token, under seq2seq names (`input_sequence`, `input_attention_mask`, `output_sequence`,
`output_attention_mask`), the future masked by the model itself. Our own code (the layers as in
separate_pad_ids.py); the wrong twin says BUG."""
from __future__ import annotations

import math

import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.h = n_heads
        self.q, self.k, self.v, self.o = (nn.Linear(d_model, d_model) for _ in range(4))

    def forward(self, x, mem, keep):
        B, T, D = x.shape
        dk = D // self.h

        def heads(t):
            return t.view(B, -1, self.h, dk).transpose(1, 2)                   # (B, H, T, dk)
        s = heads(self.q(x)) @ heads(self.k(mem)).transpose(-2, -1) / math.sqrt(dk)
        s = s.masked_fill(~keep, float("-inf"))
        return self.o((s.softmax(-1) @ heads(self.v(mem))).transpose(1, 2).reshape(B, T, D))


class EncoderLayer(nn.Module):
    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.self_attention = Attention(d_model, n_heads)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))

    def forward(self, x, keep):
        x = self.norm1(x + self.self_attention(x, x, keep))
        return self.norm2(x + self.mlp(x))


class DecoderLayer(nn.Module):
    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.self_attention = Attention(d_model, n_heads)
        self.joint_attention = Attention(d_model, n_heads)
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))

    def forward(self, y, mem, self_keep, mem_keep):
        y = self.norm1(y + self.self_attention(y, y, self_keep))
        y = self.norm2(y + self.joint_attention(y, mem, mem_keep))
        return self.norm3(y + self.mlp(y))


class Stack(nn.Module):
    def __init__(self, vocab, d_model, layers):
        super().__init__()
        self.d = d_model
        self.tok_emb = nn.Embedding(vocab, d_model)
        self.layers = nn.ModuleList(layers)

    def embed(self, ids):
        T = ids.shape[1]
        pos = torch.arange(T, dtype=torch.float64, device=ids.device)[:, None]             # (T, 1)
        rate = 10000.0 ** (-torch.arange(0, self.d, 2, dtype=torch.float64, device=ids.device) / self.d)
        pe = torch.zeros(T, self.d, dtype=torch.float64, device=ids.device)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * rate), torch.cos(pos * rate[: self.d // 2])
        x = self.tok_emb(ids)
        return x * math.sqrt(self.d) + pe.to(x.dtype)


class PaddedSeq2Seq(nn.Module):
    def __init__(self, src_vocab_size, tgt_vocab_size, d_model, n_layers, n_heads, d_ff):
        super().__init__()
        self.encoder = Stack(src_vocab_size, d_model, [EncoderLayer(d_model, n_heads, d_ff) for _ in range(n_layers)])
        self.decoder = Stack(tgt_vocab_size, d_model, [DecoderLayer(d_model, n_heads, d_ff) for _ in range(n_layers)])
        self.fc_out = nn.Linear(d_model, tgt_vocab_size)

    def target_keep(self, padding):
        T = padding.shape[1]
        past = torch.ones(T, T, dtype=torch.bool, device=padding.device).tril()          # (T, T)
        return past[None, None] & padding.bool()[:, None, None, :]                      # (B, 1, T, T)

    def forward(self, input_sequence, input_attention_mask, output_sequence, output_attention_mask):
        src_keep = input_attention_mask.bool()[:, None, None, :]                         # (B, 1, 1, S)
        x = self.encoder.embed(input_sequence)
        for layer in self.encoder.layers:
            x = layer(x, src_keep)
        y = self.decoder.embed(output_sequence)
        for layer in self.decoder.layers:
            y = layer(y, x, self.target_keep(output_attention_mask), src_keep)
        return self.fc_out(y)


class PaddedSeq2SeqBUG(PaddedSeq2Seq):
    """BUG: the decoder's self-attention sees the future (padding only, no causal part)."""

    def target_keep(self, padding):
        return padding.bool()[:, None, None, :]
