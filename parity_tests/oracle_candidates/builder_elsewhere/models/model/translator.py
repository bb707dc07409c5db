"""A whole torch encoder-decoder assembled from parts handed to its constructor
(`Translator(encoder, decoder, src_embed, tgt_embed, head)`), with no function of this file that
builds it: the package's build_model.py does, from an embedding width `d_embed` beside `d_model`.
Each token table sits two modules deep in its embedding (`src_embed.embedding.0.embedding`).
Our own code; the BUG embeddings (UnscaledEmbed) are not scaled by sqrt(d_model)."""
import math

import torch
from torch import nn


class Residual(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)

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


class TokenTable(nn.Module):
    def __init__(self, vocab, d):
        super().__init__()
        self.embedding = nn.Embedding(vocab, d)

    def forward(self, ids):
        return self.embedding(ids)


class Embed(nn.Module):
    def __init__(self, vocab, d):
        super().__init__()
        self.embedding, self.d = nn.Sequential(TokenTable(vocab, d)), d

    def forward(self, ids):
        T = ids.shape[1]
        pos = torch.arange(T, dtype=torch.float64)[:, None]
        div = torch.exp(torch.arange(0, self.d, 2, dtype=torch.float64) * (-math.log(10000.0) / self.d))
        pe = torch.zeros(T, self.d, dtype=torch.float64)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * div), torch.cos(pos * div)
        e = self.embedding(ids)
        return self.scale(e) + pe.to(e.dtype)

    def scale(self, e):
        return e * math.sqrt(self.d)


class UnscaledEmbed(Embed):
    """BUG: the token embeddings are not multiplied by sqrt(d_model)."""

    def scale(self, e):
        return e


class Translator(nn.Module):
    def __init__(self, encoder, decoder, src_embed, tgt_embed, head):
        super().__init__()
        self.encoder, self.decoder = encoder, decoder
        self.src_embed, self.tgt_embed, self.head = src_embed, tgt_embed, head

    def forward(self, src, tgt, src_mask, tgt_mask):
        mem = self.encoder(self.src_embed(src), src_mask)
        return self.head(self.decoder(self.tgt_embed(tgt), mem, src_mask, tgt_mask))


class TranslatorUnscaled(Translator):
    """The same model, built by its own function with the BUG embeddings."""
