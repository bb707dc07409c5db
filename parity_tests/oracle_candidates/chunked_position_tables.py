"""A sinusoidal table computed CHUNK rows at a time, each chunk starting at its own first position,
as a module and inside a whole encoder-decoder (torch's MultiheadAttention): right at every length.
Our own code. The BUG twins start every chunk again at position 0: rows 24.. repeat rows 0..,
right for every length a search draws and for the lengths stretched just past them (19, 23)."""
import math

import torch
from torch import nn

CHUNK = 24          # rows computed at a time


def sinusoid_table(n, d_model, restart=False):
    """(n, d_model) sin / cos table, computed CHUNK rows at a time (restart: BUG, each chunk from 0)."""
    rate = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    parts = []
    for start in range(0, n, CHUNK):
        rows = min(CHUNK, n - start)
        pos = (0 if restart else start) + torch.arange(rows, dtype=torch.float64)[:, None]
        part = torch.zeros(rows, d_model, dtype=torch.float64)
        part[:, 0::2], part[:, 1::2] = torch.sin(pos * rate), torch.cos(pos * rate)
        parts.append(part)
    return torch.cat(parts)


class PositionalEncoding(nn.Module):
    RESTART = False

    def __init__(self, d_model, max_len=5000):
        super().__init__()
        self.register_buffer("pe", sinusoid_table(max_len, d_model, self.RESTART))

    def forward(self, x):
        return x + self.pe[: x.shape[1]].to(x.dtype)


class Layer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, cross):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d_model, num_heads, batch_first=True)
        self.cross_attn = nn.MultiheadAttention(d_model, num_heads, batch_first=True) if cross else None
        self.ffn = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))
        self.norms = nn.ModuleList(nn.LayerNorm(d_model) for _ in range(3 if cross else 2))

    def forward(self, x, hide, memory=None, memory_hide=None):
        x = self.norms[0](x + self.self_attn(x, x, x, attn_mask=hide, need_weights=False)[0])
        if self.cross_attn is not None:
            x = self.norms[1](x + self.cross_attn(x, memory, memory, key_padding_mask=memory_hide,
                                                  need_weights=False)[0])
        return self.norms[-1](x + self.ffn(x))


class Transformer(nn.Module):
    POSITIONS = PositionalEncoding

    def __init__(self, src_vocab, tgt_vocab, d_model, num_heads, d_ff, num_layers, max_len=5000,
                 pad_id=0):
        super().__init__()
        self.d, self.pad = d_model, pad_id
        self.src_embed, self.tgt_embed = nn.Embedding(src_vocab, d_model), nn.Embedding(tgt_vocab, d_model)
        self.positions = self.POSITIONS(d_model, max_len)
        self.encoder = nn.ModuleList(Layer(d_model, num_heads, d_ff, False) for _ in range(num_layers))
        self.decoder = nn.ModuleList(Layer(d_model, num_heads, d_ff, True) for _ in range(num_layers))
        self.generator = nn.Linear(d_model, tgt_vocab)

    def forward(self, src, tgt):
        B, S, T = src.shape[0], src.shape[1], tgt.shape[1]
        src_hide = (src == self.pad)[:, None, None, :].expand(B, 1, S, S)          # True: hidden
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        tgt_hide = (tgt == self.pad)[:, None, None, :] | future
        x = self.positions(self.src_embed(src) * math.sqrt(self.d))
        for layer in self.encoder:
            x = layer(x, src_hide.repeat_interleave(layer.self_attn.num_heads, 0).reshape(-1, S, S))
        y = self.positions(self.tgt_embed(tgt) * math.sqrt(self.d))
        heads = self.decoder[0].self_attn.num_heads
        for layer in self.decoder:
            y = layer(y, tgt_hide.expand(B, 1, T, T).repeat_interleave(heads, 0).reshape(-1, T, T),
                      x, src == self.pad)
        return self.generator(y)


class PositionalEncodingBUG(PositionalEncoding):
    """BUG: every chunk starts again at position 0."""

    RESTART = True


class TransformerBUG(Transformer):
    """BUG: its positional table restarts every chunk at position 0."""

    POSITIONS = PositionalEncodingBUG
