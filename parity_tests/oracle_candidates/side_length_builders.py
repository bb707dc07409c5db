"""Builder functions returning an encoder-decoder whose source and target each have a positional
table sized by a length of their own (`build(src_vocab_size, tgt_vocab_size, src_seq_len,
tgt_seq_len, ...)`, both lengths upper bounds), kept as (1, length, d_model) buffers, and whose
output projection is a Linear inside a part of its own (`projection_layer.proj`), tables untied.
A correct builder and a twin whose docstring says BUG."""
from __future__ import annotations

import math

from shared_vocab_tables import DecoderLayer, EncoderLayer, sinusoid
from torch import nn


class _Projection(nn.Module):
    def __init__(self, d_model, vocab_size):
        super().__init__()
        self.proj = nn.Linear(d_model, vocab_size)

    def forward(self, y):
        return self.proj(y)                                                             # (B, T, V)


class SideLengthTransformer(nn.Module):
    def __init__(self, src_vocab_size, tgt_vocab_size, src_seq_len, tgt_seq_len, d_model, n_heads,
                 d_ff, n_layers, scale_target=True):
        super().__init__()
        self.d, self.scale_target = d_model, scale_target
        self.src_embedding = nn.Embedding(src_vocab_size, d_model)
        self.tgt_embedding = nn.Embedding(tgt_vocab_size, d_model)
        self.register_buffer("src_positions", sinusoid(src_seq_len, d_model)[None].float())
        self.register_buffer("tgt_positions", sinusoid(tgt_seq_len, d_model)[None].float())
        self.encoder_layers = nn.ModuleList(EncoderLayer(d_model, n_heads, d_ff) for _ in range(n_layers))
        self.decoder_layers = nn.ModuleList(DecoderLayer(d_model, n_heads, d_ff) for _ in range(n_layers))
        self.projection_layer = _Projection(d_model, tgt_vocab_size)

    def embed(self, table, positions, ids, scale=True):
        x = table(ids) * (math.sqrt(self.d) if scale else 1.0)
        return x + positions[:, : ids.shape[1]].to(x.dtype)                             # (B, T, D)

    def forward(self, src, tgt, src_mask, tgt_mask):
        x = self.embed(self.src_embedding, self.src_positions, src)
        for layer in self.encoder_layers:
            x = layer(x, src_mask)
        y = self.embed(self.tgt_embedding, self.tgt_positions, tgt, scale=self.scale_target)
        for layer in self.decoder_layers:
            y = layer(y, x, tgt_mask, src_mask)
        return self.projection_layer(y)


def build_side_length_transformer(src_vocab_size, tgt_vocab_size, src_seq_len, tgt_seq_len,
                                  d_model=512, n_layers=6, n_heads=8, d_ff=2048):
    return SideLengthTransformer(src_vocab_size, tgt_vocab_size, src_seq_len, tgt_seq_len, d_model,
                                 n_heads, d_ff, n_layers)


def build_side_length_transformer_BUG(src_vocab_size, tgt_vocab_size, src_seq_len, tgt_seq_len,
                                      d_model=512, n_layers=6, n_heads=8, d_ff=2048):
    """BUG: the target embeddings are not scaled by sqrt(d_model) (the source ones are)."""
    return SideLengthTransformer(src_vocab_size, tgt_vocab_size, src_seq_len, tgt_seq_len, d_model,
                                 n_heads, d_ff, n_layers, scale_target=False)


