"""A whole encoder-decoder model in the style of seq2seq tutorial notebooks: Encoder(input_dim,
hid_dim, n_layers, n_heads, pf_dim, dropout, device, max_length) with LEARNED positions
(nn.Embedding) and token embeddings scaled by sqrt(hid_dim), Decoder(...), Seq2Seq(encoder, decoder,
src_pad_idx, trg_pad_idx, device) building its masks from the pad ids. Its learned position table
has no counterpart in the reference (sinusoidal positions): the oracle must say so, never compare
it as something else. Written for the oracle's reach tests."""
import torch
from torch import nn

from seq2seq_style import DecoderLayer, EncoderLayer  # noqa: F401  (same folder)


class Encoder(nn.Module):
    def __init__(self, input_dim, hid_dim, n_layers, n_heads, pf_dim, dropout, device, max_length=100):
        super().__init__()
        self.device = device
        self.tok_embedding = nn.Embedding(input_dim, hid_dim)
        self.pos_embedding = nn.Embedding(max_length, hid_dim)
        self.layers = nn.ModuleList([EncoderLayer(hid_dim, n_heads, pf_dim, dropout, device)
                                     for _ in range(n_layers)])
        self.dropout = nn.Dropout(dropout)
        self.scale = hid_dim ** 0.5

    def forward(self, src, src_mask):
        B, S = src.shape
        pos = torch.arange(0, S, device=src.device).unsqueeze(0).repeat(B, 1)
        src = self.dropout(self.tok_embedding(src) * self.scale + self.pos_embedding(pos))
        for layer in self.layers:
            src = layer(src, src_mask)
        return src


class Decoder(nn.Module):
    def __init__(self, output_dim, hid_dim, n_layers, n_heads, pf_dim, dropout, device, max_length=100):
        super().__init__()
        self.tok_embedding = nn.Embedding(output_dim, hid_dim)
        self.pos_embedding = nn.Embedding(max_length, hid_dim)
        self.layers = nn.ModuleList([DecoderLayer(hid_dim, n_heads, pf_dim, dropout, device)
                                     for _ in range(n_layers)])
        self.fc_out = nn.Linear(hid_dim, output_dim)
        self.dropout = nn.Dropout(dropout)
        self.scale = hid_dim ** 0.5

    def forward(self, trg, enc_src, trg_mask, src_mask):
        B, T = trg.shape
        pos = torch.arange(0, T, device=trg.device).unsqueeze(0).repeat(B, 1)
        trg = self.dropout(self.tok_embedding(trg) * self.scale + self.pos_embedding(pos))
        attention = None
        for layer in self.layers:
            trg, attention = layer(trg, enc_src, trg_mask, src_mask)
        return self.fc_out(trg), attention


class Seq2Seq(nn.Module):
    def __init__(self, encoder, decoder, src_pad_idx, trg_pad_idx, device):
        super().__init__()
        self.encoder, self.decoder = encoder, decoder
        self.src_pad_idx, self.trg_pad_idx, self.device = src_pad_idx, trg_pad_idx, device

    def make_src_mask(self, src):
        return (src != self.src_pad_idx).unsqueeze(1).unsqueeze(2)

    def make_trg_mask(self, trg):
        pad = (trg != self.trg_pad_idx).unsqueeze(1).unsqueeze(2)
        T = trg.shape[1]
        return pad & torch.tril(torch.ones((T, T), device=trg.device)).bool()

    def forward(self, src, trg):
        src_mask, trg_mask = self.make_src_mask(src), self.make_trg_mask(trg)
        enc_src = self.encoder(src, src_mask)
        return self.decoder(trg, enc_src, trg_mask, src_mask)
