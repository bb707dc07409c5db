"""Sizes and stacks named in ways of their own: an encoder layer whose model width is `n_dim`
(beside `hidden_dim` for the feed-forward and `head_num`), and a model whose encoder and decoder
parts keep their layer stacks as `encoder.enc_blocks` / `decoder.dec_blocks` and whose decoder
part holds the output layer as `decoder.out_linear`. Right ones match; BUG twins say so."""
import math

import torch
from torch import nn
from torch_layers import DecoderLayer, EncoderLayer, MultiHeadAttention, PositionalEncoding


class DimNamedEncoderLayer(nn.Module):
    def __init__(self, n_dim, hidden_dim, head_num, dropout_rate=0.1):
        super().__init__()
        self.attention = MultiHeadAttention(n_dim, head_num)
        self.norm1, self.norm2 = nn.LayerNorm(n_dim), nn.LayerNorm(n_dim)
        self.linear1, self.linear2 = nn.Linear(n_dim, hidden_dim), nn.Linear(hidden_dim, n_dim)
        self.drop = nn.Dropout(dropout_rate)

    def forward(self, x):
        y = self.norm1(x + self.drop(self.attention(x, x, x, None)))
        return self.norm2(y + self.drop(self.linear2(torch.relu(self.linear1(y)))))


class DimNamedEncoderLayerBUG(DimNamedEncoderLayer):
    """BUG: the feed-forward reads the layer's input, not the attention sublayer's output."""

    def forward(self, x):
        y = self.norm1(x + self.drop(self.attention(x, x, x, None)))
        return self.norm2(y + self.drop(self.linear2(torch.relu(self.linear1(x)))))


class StackedPartsTransformer(nn.Module):
    """The paper's model (as torch_layers.Transformer) with its stacks inside named parts."""

    def __init__(self, src_vocab_size, tgt_vocab_size, d_model, num_heads, num_layers, d_ff,
                 max_seq_length, dropout):
        super().__init__()
        self.d_model = d_model
        self.positional_encoding = PositionalEncoding(d_model, dropout, max_seq_length)
        self.encoder, self.decoder = nn.Module(), nn.Module()
        self.encoder.embedding = nn.Embedding(src_vocab_size, d_model)
        self.encoder.enc_blocks = nn.ModuleList(
            EncoderLayer(d_model, num_heads, d_ff, dropout) for _ in range(num_layers))
        self.decoder.embedding = nn.Embedding(tgt_vocab_size, d_model)
        self.decoder.dec_blocks = nn.ModuleList(
            DecoderLayer(d_model, num_heads, d_ff, dropout) for _ in range(num_layers))
        self.decoder.out_linear = nn.Linear(d_model, tgt_vocab_size)

    def scale(self):
        return math.sqrt(self.d_model)

    def forward(self, src, tgt):
        keep_src = (src != 0)[:, None, None, :]
        t = tgt.size(1)
        causal = torch.tril(torch.ones(t, t, dtype=torch.bool, device=tgt.device))
        keep_tgt = (tgt != 0)[:, None, None, :] & causal[None, None]
        x = self.positional_encoding(self.encoder.embedding(src) * self.scale())
        for block in self.encoder.enc_blocks:
            x = block(x, keep_src)
        y = self.positional_encoding(self.decoder.embedding(tgt) * self.scale())
        for block in self.decoder.dec_blocks:
            y = block(y, x, keep_src, keep_tgt)
        return self.decoder.out_linear(y)


class StackedPartsTransformerBUG(StackedPartsTransformer):
    """BUG: the embeddings are not multiplied by sqrt(d_model)."""

    def scale(self):
        return 1.0
