"""An encoder-decoder taking its masks as Hugging Face does: key paddings of shape (batch, length),
1 = a real token, under seq2seq names (`input_sequence`, `input_attention_mask`, `output_sequence`,
`output_attention_mask`), the future masked by the model itself. Our own code (the layers are
separate_pad_ids.py's, imported from the file beside it); the wrong twin says BUG."""
from __future__ import annotations

import torch
from separate_pad_ids import DecoderLayer, EncoderLayer, Stack
from torch import nn


class PaddedSeq2Seq(nn.Module):
    def __init__(self, src_vocab_size, tgt_vocab_size, d_model, n_layers, n_heads, d_ff):
        super().__init__()
        self.encoder = Stack(src_vocab_size, d_model, [EncoderLayer(d_model, n_heads, d_ff) for _ in range(n_layers)])
        self.decoder = Stack(tgt_vocab_size, d_model, [DecoderLayer(d_model, n_heads, d_ff) for _ in range(n_layers)])
        self.fc_out = nn.Linear(d_model, tgt_vocab_size)

    def target_keep(self, padding):
        T = padding.shape[1]
        past = torch.ones(T, T, dtype=torch.bool, device=padding.device).tril()          # (T, T)
        return past[None, None] & padding.bool()[:, None, None, :]                      # (B, 1, T, T)

    def forward(self, input_sequence, input_attention_mask, output_sequence, output_attention_mask):
        src_keep = input_attention_mask.bool()[:, None, None, :]                         # (B, 1, 1, S)
        x = self.encoder.embed(input_sequence)
        for layer in self.encoder.layers:
            x = layer(x, src_keep)
        y = self.decoder.embed(output_sequence)
        for layer in self.decoder.layers:
            y = layer(y, x, self.target_keep(output_attention_mask), src_keep)
        return self.fc_out(y)


class PaddedSeq2SeqBUG(PaddedSeq2Seq):
    """BUG: the decoder's self-attention sees the future (padding only, no causal part)."""

    def target_keep(self, padding):
        return padding.bool()[:, None, None, :]
