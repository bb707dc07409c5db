"""A whole torch encoder-decoder whose layers keep their norms inside residual steps under names
no table holds (`encoder_layers.0.attn_step.ln.gain`, `.shift`), so that inside the model they are
found only by registration order, layer by layer. Built from sizes. Test data for
parity_tests/test_oracle_wrapped_norm_models.py; the BUG twin differs in one line."""
import math

import torch
from torch import nn


class Norm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.gain, self.shift = nn.Parameter(torch.ones(d)), nn.Parameter(torch.zeros(d))

    def forward(self, x):
        mu = x.mean(-1, keepdim=True)
        var = ((x - mu) ** 2).mean(-1, keepdim=True)
        return self.gain * (x - mu) / torch.sqrt(var + 1e-5) + self.shift


class Step(nn.Module):
    """Add the sublayer's output to its input, then normalise."""

    def __init__(self, d):
        super().__init__()
        self.ln = Norm(d)

    def forward(self, x, out):
        return self.ln(x + out)


class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.q_lin, self.k_lin = nn.Linear(d, d), nn.Linear(d, d)
        self.v_lin, self.o_lin = nn.Linear(d, d), nn.Linear(d, d)

    def forward(self, x, kv, keep):
        B, T, d = x.shape
        hd = d // self.heads

        def split(t):
            return t.view(B, -1, self.heads, hd).transpose(1, 2)

        s = split(self.q_lin(x)) @ split(self.k_lin(kv)).transpose(-1, -2) / math.sqrt(hd)
        if keep is not None:
            s = s.masked_fill(keep == 0, float("-inf"))
        o = torch.softmax(s, -1) @ split(self.v_lin(kv))
        return self.o_lin(o.transpose(1, 2).reshape(B, T, d))


class Feed(nn.Module):
    def __init__(self, d, d_ff):
        super().__init__()
        self.up, self.down = nn.Linear(d, d_ff), nn.Linear(d_ff, d)

    def forward(self, x):
        return self.down(torch.relu(self.up(x)))


class EncLayer(nn.Module):
    def __init__(self, d, heads, d_ff):
        super().__init__()
        self.attn, self.attn_step = Attention(d, heads), Step(d)
        self.feed, self.feed_step = Feed(d, d_ff), Step(d)

    def forward(self, x, keep):
        x = self.attn_step(x, self.attn(x, x, keep))
        return self.feed_step(x, self.feed(x))


class DecLayer(nn.Module):
    def __init__(self, d, heads, d_ff):
        super().__init__()
        self.attn, self.attn_step = Attention(d, heads), Step(d)
        self.cross, self.cross_step = Attention(d, heads), Step(d)
        self.feed, self.feed_step = Feed(d, d_ff), Step(d)

    def forward(self, x, mem, src_keep, tgt_keep):
        x = self.attn_step(x, self.attn(x, x, tgt_keep))
        x = self.cross_step(x, self.cross(x, mem, src_keep))
        return self.feed_step(x, self.feed(x))


def table(n, d):
    pos = torch.arange(n, dtype=torch.float64)[:, None]
    freq = torch.exp(torch.arange(0, d, 2, dtype=torch.float64) * (-math.log(10000.0) / d))
    pe = torch.zeros(n, d, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * freq), torch.cos(pos * freq)
    return pe


class Seq2Seq(nn.Module):
    def __init__(self, src_vocab_size, tgt_vocab_size, d_model, n_heads, d_ff, n_layers):
        super().__init__()
        self.d = d_model
        self.src_emb, self.tgt_emb = nn.Embedding(src_vocab_size, d_model), nn.Embedding(tgt_vocab_size, d_model)
        self.encoder_layers = nn.ModuleList(EncLayer(d_model, n_heads, d_ff) for _ in range(n_layers))
        self.decoder_layers = nn.ModuleList(DecLayer(d_model, n_heads, d_ff) for _ in range(n_layers))
        self.generator = nn.Linear(d_model, tgt_vocab_size)

    def embed(self, emb, ids):
        return emb(ids) * math.sqrt(self.d) + table(ids.shape[1], self.d).to(emb.weight.dtype)

    def forward(self, src, tgt, src_mask, tgt_mask):
        mem = self.embed(self.src_emb, src)
        for layer in self.encoder_layers:
            mem = layer(mem, src_mask)
        x = self.embed(self.tgt_emb, tgt)
        for layer in self.decoder_layers:
            x = layer(x, mem, src_mask, tgt_mask)
        return self.generator(x)


class Seq2SeqUnscaled(Seq2Seq):
    """BUG: the token embeddings are not multiplied by sqrt(d_model)."""

    def embed(self, emb, ids):
        return emb(ids) + table(ids.shape[1], self.d).to(emb.weight.dtype)
