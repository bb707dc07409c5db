"""A whole encoder-decoder built from torch's own nn.TransformerEncoderLayer / DecoderLayer in their
default sequence-first layout, with a float32 sinusoidal buffer (as the PyTorch tutorial makes it)
and its layer stacks named `enc` / `dec`. Our own code in that style; the wrong twin says BUG."""
from __future__ import annotations

import math

import torch
from torch import nn


class LibraryLayerSeq2Seq(nn.Module):
    """Batch-first ids in, batch-first logits out; (T, B, d) inside; padding id 0; causal targets."""

    def __init__(self, src_vocab_size, tgt_vocab_size, d_model, num_heads, num_layers, d_ff, max_len=128):
        super().__init__()
        self.d, self.h = d_model, num_heads
        self.src_embed = nn.Embedding(src_vocab_size, d_model)
        self.tgt_embed = nn.Embedding(tgt_vocab_size, d_model)
        pos = torch.arange(max_len, dtype=torch.float32)[:, None]                        # (L, 1)
        rate = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, 1, d_model)                                            # float32
        pe[:, 0, 0::2], pe[:, 0, 1::2] = torch.sin(pos * rate), torch.cos(pos * rate[: d_model // 2])
        self.register_buffer("pe", pe)
        self.enc = nn.ModuleList(nn.TransformerEncoderLayer(d_model, num_heads, d_ff, 0.0)
                                 for _ in range(num_layers))
        self.dec = nn.ModuleList(nn.TransformerDecoderLayer(d_model, num_heads, d_ff, 0.0)
                                 for _ in range(num_layers))
        self.generator = nn.Linear(d_model, tgt_vocab_size)

    def embed(self, table, ids):
        x = table(ids.t()) * math.sqrt(self.d)                                           # (T, B, d)
        return x + self.pe[: x.shape[0]].to(x.dtype)

    def memory_padding(self, src_pad):
        return src_pad

    def forward(self, src, tgt):
        T = tgt.shape[1]
        src_pad = src == 0                                                               # (B, S) True = pad
        future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=tgt.device), 1)    # True = hidden
        hidden = (future[None] | (tgt == 0)[:, None, :]).repeat_interleave(self.h, dim=0)  # (B*H, T, T)
        x = self.embed(self.src_embed, src)
        for layer in self.enc:
            x = layer(x, src_key_padding_mask=src_pad)
        y = self.embed(self.tgt_embed, tgt)
        for layer in self.dec:
            y = layer(y, x, tgt_mask=hidden, memory_key_padding_mask=self.memory_padding(src_pad))
        return self.generator(y).transpose(0, 1)                                         # (B, T, V)


class LibraryLayerSeq2SeqBUG(LibraryLayerSeq2Seq):
    """BUG: the decoder's cross-attention is not told which source positions are padding."""

    def memory_padding(self, src_pad):
        return None
