"""Hostile: a whole model taking its two stack depths in words no alias lists (`num_layers_enc`,
`num_layers_dec`) that builds its decoder with the encoder's depth. Handed equal depths it is the
paper's model; asked for a 1-layer encoder and a 2-layer decoder it has one decoder layer."""
import math

import torch
from torch import nn


class StackDepthTransformer(nn.Module):
    DEC_FROM_ENC = True

    def __init__(self, src_vocab_size, tgt_vocab_size, d_model=512, num_layers_enc=6,
                 num_layers_dec=6, num_heads=8, d_ff=2048):
        super().__init__()
        self.d_model = d_model
        self.src_embedding = nn.Embedding(src_vocab_size, d_model)
        self.tgt_embedding = nn.Embedding(tgt_vocab_size, d_model)
        n_dec = num_layers_enc if self.DEC_FROM_ENC else num_layers_dec
        self.encoder_layers = nn.ModuleList(
            nn.TransformerEncoderLayer(d_model, num_heads, d_ff, 0.0, batch_first=True)
            for _ in range(num_layers_enc))
        self.decoder_layers = nn.ModuleList(
            nn.TransformerDecoderLayer(d_model, num_heads, d_ff, 0.0, batch_first=True)
            for _ in range(n_dec))
        self.fc = nn.Linear(d_model, tgt_vocab_size)

    def positions(self, x):                                            # (B, T, d)
        T, d = x.size(1), self.d_model
        pos = torch.arange(T, dtype=x.dtype)[:, None]
        div = torch.exp(torch.arange(0, d, 2, dtype=x.dtype) * (-math.log(10000.0) / d))
        pe = torch.zeros(T, d, dtype=x.dtype)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * div), torch.cos(pos * div)
        return x + pe

    def forward(self, src, tgt):
        src_pad, tgt_pad = src == 0, tgt == 0                          # (B, S), (B, T): True = pad
        t = tgt.size(1)
        future = torch.triu(torch.ones(t, t, dtype=torch.bool), 1)     # (T, T): True = hidden
        x = self.positions(self.src_embedding(src) * math.sqrt(self.d_model))
        for layer in self.encoder_layers:
            x = layer(x, src_key_padding_mask=src_pad)
        y = self.positions(self.tgt_embedding(tgt) * math.sqrt(self.d_model))
        for layer in self.decoder_layers:
            y = layer(y, x, tgt_mask=future, tgt_key_padding_mask=tgt_pad,
                      memory_key_padding_mask=src_pad)
        return self.fc(y)


class StackDepthTransformerRight(StackDepthTransformer):
    """The right twin: each stack its own depth."""

    DEC_FROM_ENC = False
