"""A whole torch encoder-decoder whose Encoder and Decoder each normalise their output once more
(`self.norm` after the last layer, as torch.nn.Transformer and pre-norm code do), built from
sizes, post-norm layers. Our own code; the BUG twin builds the encoder's final norm but never
applies it."""
import math

import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.w_q, self.w_k, self.w_v, self.w_o = (nn.Linear(d_model, d_model) for _ in range(4))

    def forward(self, x, mem, mask):
        # x (B, T, d), mem (B, S, d); mask (B, 1, T, S), 1 = may attend
        B, T, d = x.shape
        f = d // self.h
        q = self.w_q(x).view(B, T, self.h, f).transpose(1, 2)
        k = self.w_k(mem).view(B, -1, self.h, f).transpose(1, 2)
        v = self.w_v(mem).view(B, -1, self.h, f).transpose(1, 2)
        a = (q @ k.transpose(-2, -1) / math.sqrt(f)).masked_fill(mask == 0, -1e9).softmax(-1)
        return self.w_o((a @ v).transpose(1, 2).reshape(B, T, d))


class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class EncoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.self_attn, self.feed_forward = Attention(d_model, num_heads), FeedForward(d_model, d_ff)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)

    def forward(self, x, mask):
        x = self.norm1(x + self.self_attn(x, x, mask))
        return self.norm2(x + self.feed_forward(x))


class DecoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.self_attn, self.cross_attn = Attention(d_model, num_heads), Attention(d_model, num_heads)
        self.feed_forward = FeedForward(d_model, d_ff)
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))

    def forward(self, x, mem, src_mask, tgt_mask):
        x = self.norm1(x + self.self_attn(x, x, tgt_mask))
        x = self.norm2(x + self.cross_attn(x, mem, src_mask))
        return self.norm3(x + self.feed_forward(x))


class Encoder(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, num_layers):
        super().__init__()
        self.layers = nn.ModuleList(EncoderLayer(d_model, num_heads, d_ff) for _ in range(num_layers))
        self.norm = nn.LayerNorm(d_model)

    def last(self, x):
        return self.norm(x)

    def forward(self, x, mask):
        for layer in self.layers:
            x = layer(x, mask)
        return self.last(x)


class Decoder(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, num_layers):
        super().__init__()
        self.layers = nn.ModuleList(DecoderLayer(d_model, num_heads, d_ff) for _ in range(num_layers))
        self.norm = nn.LayerNorm(d_model)

    def forward(self, x, mem, src_mask, tgt_mask):
        for layer in self.layers:
            x = layer(x, mem, src_mask, tgt_mask)
        return self.norm(x)


class UnnormedEncoder(Encoder):
    def last(self, x):
        return x                        # BUG: its final norm is built but never applied


def _table(T, d):
    pos = torch.arange(T, dtype=torch.float64)[:, None]
    div = torch.exp(torch.arange(0, d, 2, dtype=torch.float64) * (-math.log(10000.0) / d))
    pe = torch.zeros(T, d, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * div), torch.cos(pos * div)
    return pe


class FinalNormTransformer(nn.Module):
    encoder_class = Encoder

    def __init__(self, src_vocab_size, tgt_vocab_size, d_model, num_heads, num_layers, d_ff):
        super().__init__()
        self.d_model = d_model
        self.src_embed = nn.Embedding(src_vocab_size, d_model)
        self.tgt_embed = nn.Embedding(tgt_vocab_size, d_model)
        self.encoder = self.encoder_class(d_model, num_heads, d_ff, num_layers)
        self.decoder = Decoder(d_model, num_heads, d_ff, num_layers)
        self.output_proj = nn.Linear(d_model, tgt_vocab_size)

    def embed(self, table, ids):
        e = table(ids) * math.sqrt(self.d_model)
        return e + _table(ids.shape[1], self.d_model).to(e.dtype)

    def forward(self, src, tgt, src_mask, tgt_mask):
        mem = self.encoder(self.embed(self.src_embed, src), src_mask)
        return self.output_proj(self.decoder(self.embed(self.tgt_embed, tgt), mem, src_mask, tgt_mask))


class FinalNormTransformerBUG(FinalNormTransformer):
    encoder_class = UnnormedEncoder


def make_model(src_vocab_size, tgt_vocab_size, num_layers=2, d_model=16, d_ff=32, num_heads=2):
    """The same model behind a builder function, as the Annotated Transformer's `make_model`."""
    return FinalNormTransformer(src_vocab_size, tgt_vocab_size, d_model, num_heads, num_layers, d_ff)


def make_model_BUG(src_vocab_size, tgt_vocab_size, num_layers=2, d_model=16, d_ff=32, num_heads=2):
    return FinalNormTransformerBUG(src_vocab_size, tgt_vocab_size, d_model, num_heads, num_layers,
                                   d_ff)
