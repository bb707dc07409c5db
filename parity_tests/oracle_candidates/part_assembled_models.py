"""A whole torch encoder-decoder assembled from parts handed to its constructor
(`Translator(encoder, decoder, src_embed, tgt_embed, head)`), which a function of the same file
builds from sizes and returns (`build_translator(src_vocab_size, tgt_vocab_size, ...)`); its norms
sit in residual wrappers with the epsilon fixed at 1e-6. Test data for
parity_tests/test_oracle_part_assembled_models.py; the BUG twin differs in one line."""
import math

import torch
from torch import nn


class Residual(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d, eps=1e-6)

    def forward(self, x, out):
        return self.norm(x + out)


class MHA(nn.Module):
    def __init__(self, heads, d):
        super().__init__()
        self.h = heads
        self.wq, self.wk, self.wv, self.wo = (nn.Linear(d, d) for _ in range(4))

    def forward(self, x, mem, mask):
        B, T, d = x.shape
        f = d // self.h
        q = self.wq(x).view(B, T, self.h, f).transpose(1, 2)
        k = self.wk(mem).view(B, -1, self.h, f).transpose(1, 2)
        v = self.wv(mem).view(B, -1, self.h, f).transpose(1, 2)
        a = (q @ k.transpose(-2, -1) / math.sqrt(f)).masked_fill(mask == 0, -1e9).softmax(-1)
        return self.wo((a @ v).transpose(1, 2).reshape(B, T, d))


class FFN(nn.Module):
    def __init__(self, d, d_ff):
        super().__init__()
        self.l1, self.l2 = nn.Linear(d, d_ff), nn.Linear(d_ff, d)

    def forward(self, x):
        return self.l2(torch.relu(self.l1(x)))


class EncoderLayer(nn.Module):
    def __init__(self, self_attn, ffn, d):
        super().__init__()
        self.self_attn, self.ffn = self_attn, ffn
        self.res = nn.ModuleList([Residual(d), Residual(d)])

    def forward(self, x, mask):
        x = self.res[0](x, self.self_attn(x, x, mask))
        return self.res[1](x, self.ffn(x))


class DecoderLayer(nn.Module):
    def __init__(self, self_attn, cross_attn, ffn, d):
        super().__init__()
        self.self_attn, self.cross_attn, self.ffn = self_attn, cross_attn, ffn
        self.res = nn.ModuleList([Residual(d), Residual(d), Residual(d)])

    def forward(self, x, mem, src_mask, tgt_mask):
        x = self.res[0](x, self.self_attn(x, x, tgt_mask))
        x = self.res[1](x, self.cross_attn(x, mem, src_mask))
        return self.res[2](x, self.ffn(x))


class Stack(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.layers = layers

    def forward(self, x, *args):
        for layer in self.layers:
            x = layer(x, *args)
        return x


class Embed(nn.Module):
    def __init__(self, vocab, d):
        super().__init__()
        self.lut, self.d = nn.Embedding(vocab, d), d

    def forward(self, ids):
        T = ids.shape[1]
        pos = torch.arange(T, dtype=torch.float64)[:, None]
        div = torch.exp(torch.arange(0, self.d, 2, dtype=torch.float64) * (-math.log(10000.0) / self.d))
        pe = torch.zeros(T, self.d, dtype=torch.float64)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * div), torch.cos(pos * div)
        return self.scale(self.lut(ids)) + pe.to(self.lut.weight.dtype)

    def scale(self, e):
        return e * math.sqrt(self.d)


class Translator(nn.Module):
    def __init__(self, encoder, decoder, src_embed, tgt_embed, head):
        super().__init__()
        self.encoder, self.decoder = encoder, decoder
        self.src_embed, self.tgt_embed, self.head = src_embed, tgt_embed, head

    def forward(self, src, tgt, src_mask, tgt_mask):
        mem = self.encoder(self.src_embed(src), src_mask)
        return self.head(self.decoder(self.tgt_embed(tgt), mem, src_mask, tgt_mask))


def _parts(src_vocab_size, tgt_vocab_size, n_layers, d_model, d_ff, n_heads):
    enc = Stack(nn.ModuleList(EncoderLayer(MHA(n_heads, d_model), FFN(d_model, d_ff), d_model)
                              for _ in range(n_layers)))
    dec = Stack(nn.ModuleList(DecoderLayer(MHA(n_heads, d_model), MHA(n_heads, d_model),
                                           FFN(d_model, d_ff), d_model) for _ in range(n_layers)))
    return enc, dec, Embed(src_vocab_size, d_model), Embed(tgt_vocab_size, d_model)


def build_translator(src_vocab_size, tgt_vocab_size, n_layers=2, d_model=32, d_ff=64, n_heads=4):
    enc, dec, src, tgt = _parts(src_vocab_size, tgt_vocab_size, n_layers, d_model, d_ff, n_heads)
    model = Translator(enc, dec, src, tgt, nn.Linear(d_model, tgt_vocab_size))
    return model


class UnscaledEmbed(Embed):
    """BUG: the token embeddings are not multiplied by sqrt(d_model)."""

    def scale(self, e):
        return e


class TranslatorUnscaled(Translator):
    """The same model, built by its own function with the BUG embeddings."""


def build_unscaled(src_vocab_size, tgt_vocab_size, n_layers=2, d_model=32, d_ff=64, n_heads=4):
    enc, dec, _, _ = _parts(src_vocab_size, tgt_vocab_size, n_layers, d_model, d_ff, n_heads)
    return TranslatorUnscaled(enc, dec, UnscaledEmbed(src_vocab_size, d_model),
                              UnscaledEmbed(tgt_vocab_size, d_model), nn.Linear(d_model, tgt_vocab_size))
