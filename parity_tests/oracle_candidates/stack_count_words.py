"""A model whose layer counts are named with the stack last (`num_layers_enc`, `num_layers_dec`),
words no alias lists (test data for parity_tests/test_oracle_stack_count_words.py). Right one
matches; the BUG twin says so."""
import math

import torch
from torch import nn
from torch_layers import DecoderLayer, EncoderLayer, PositionalEncoding


class StackCountTransformer(nn.Module):
    """The paper's model, each stack's depth its own argument."""

    def __init__(self, src_vocab_size, tgt_vocab_size, d_model=512, num_layers_enc=6,
                 num_layers_dec=6, num_heads=8, d_ff=2048, dropout=0.1):
        super().__init__()
        self.d_model = d_model
        self.positional_encoding = PositionalEncoding(d_model, dropout, 64)
        self.src_embedding = nn.Embedding(src_vocab_size, d_model)
        self.tgt_embedding = nn.Embedding(tgt_vocab_size, d_model)
        self.encoder_layers = nn.ModuleList(
            EncoderLayer(d_model, num_heads, d_ff, dropout) for _ in range(num_layers_enc))
        self.decoder_layers = nn.ModuleList(
            DecoderLayer(d_model, num_heads, d_ff, dropout) for _ in range(num_layers_dec))
        self.fc = nn.Linear(d_model, tgt_vocab_size)

    def scale(self):
        return math.sqrt(self.d_model)

    def forward(self, src, tgt):
        keep_src = (src != 0)[:, None, None, :]                       # (B, 1, 1, S)
        t = tgt.size(1)
        causal = torch.tril(torch.ones(t, t, dtype=torch.bool, device=tgt.device))
        keep_tgt = (tgt != 0)[:, None, None, :] & causal[None, None]  # (B, 1, T, T)
        x = self.positional_encoding(self.src_embedding(src) * self.scale())
        for layer in self.encoder_layers:
            x = layer(x, keep_src)
        y = self.positional_encoding(self.tgt_embedding(tgt) * self.scale())
        for layer in self.decoder_layers:
            y = layer(y, x, keep_src, keep_tgt)
        return self.fc(y)


class StackCountTransformerBUG(StackCountTransformer):
    """BUG: the embeddings are not multiplied by sqrt(d_model)."""

    def scale(self):
        return 1.0
