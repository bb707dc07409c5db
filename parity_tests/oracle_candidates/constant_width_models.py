"""Whole encoder-decoder models whose feed-forward width is a module-level constant, as code copied
from the paper's table writes it (`D_FF = 40` at the top of the file; the constructor takes no
d_ff); the second also fixes its head count (`HEADS = 4`) and takes only the model width. Batch-first
throughout, padding id 0, causal targets, embeddings scaled by sqrt(d_model). Our own code in that
style; the wrong twin says BUG."""
from __future__ import annotations

import math

import torch
from torch import nn

D_FF = 40
HEADS = 4


def sinusoid(length, width):
    pos = torch.arange(length, dtype=torch.get_default_dtype())[:, None]
    rate = torch.exp(torch.arange(0, width, 2, dtype=pos.dtype) * (-math.log(10000.0) / width))
    table = torch.zeros(length, width, dtype=pos.dtype)
    table[:, 0::2], table[:, 1::2] = torch.sin(pos * rate), torch.cos(pos * rate[: width // 2])
    return table


class ConstantWidthSeq2Seq(nn.Module):
    def __init__(self, src_vocab_size, tgt_vocab_size, d_model, num_heads, num_layers, max_len=128):
        super().__init__()
        self.width = d_model
        self.src_embed = nn.Embedding(src_vocab_size, d_model)
        self.tgt_embed = nn.Embedding(tgt_vocab_size, d_model)
        self.register_buffer("pe", sinusoid(max_len, d_model))
        self.encoders = nn.ModuleList(nn.TransformerEncoderLayer(d_model, num_heads, D_FF, 0.0, batch_first=True)
                                      for _ in range(num_layers))
        self.decoders = nn.ModuleList(nn.TransformerDecoderLayer(d_model, num_heads, D_FF, 0.0, batch_first=True)
                                      for _ in range(num_layers))
        self.generator = nn.Linear(d_model, tgt_vocab_size)

    def embed(self, table, ids):
        x = table(ids) * math.sqrt(self.width)
        return x + self.pe[: ids.shape[1]].to(x.dtype)

    def cross_padding(self, src_pad):
        return src_pad

    def forward(self, src, tgt):
        T = tgt.shape[1]
        src_pad = src == 0                                                        # True = padding
        future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=tgt.device), 1)
        x = self.embed(self.src_embed, src)
        for layer in self.encoders:
            x = layer(x, src_key_padding_mask=src_pad)
        y = self.embed(self.tgt_embed, tgt)
        for layer in self.decoders:
            y = layer(y, x, tgt_mask=future, tgt_key_padding_mask=tgt == 0,
                      memory_key_padding_mask=self.cross_padding(src_pad))
        return self.generator(y)


class ConstantWidthSeq2SeqBUG(ConstantWidthSeq2Seq):
    """BUG: the decoder's cross-attention is not told which source positions are padding."""

    def cross_padding(self, src_pad):
        return None


class ConstantSizesSeq2Seq(ConstantWidthSeq2Seq):
    """The head count fixed as well: built from d_model and the layer count only."""

    def __init__(self, src_vocab_size, tgt_vocab_size, d_model, num_layers):
        super().__init__(src_vocab_size, tgt_vocab_size, d_model, HEADS, num_layers)


class UnscaledConstantWidthSeq2Seq(ConstantWidthSeq2Seq):
    """BUG (against the paper, section 3.4): the embeddings are not multiplied by sqrt(d_model)."""

    def embed(self, table, ids):
        x = table(ids)
        return x + self.pe[: ids.shape[1]].to(x.dtype)
