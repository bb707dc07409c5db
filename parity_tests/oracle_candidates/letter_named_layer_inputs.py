"""Torch layers whose forward takes its inputs as the attention's single letters: an encoder
layer `forward(q, k, v, mask)` (all three are x) and a decoder layer `forward(q, k, v, src_mask,
tgt_mask)` (q is the decoder input, k and v the encoder memory), each handing them on to its
attention. Test data for parity_tests/test_oracle_letter_named_layer_inputs.py; each BUG twin
differs in one line."""
import math

import torch
from torch import nn


class Attn(nn.Module):
    def __init__(self, d_model, nheads):
        super().__init__()
        self.h, self.dh = nheads, d_model // nheads
        self.lq, self.lk = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.lv, self.lo = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def split(self, t):
        return t.view(t.shape[0], t.shape[1], self.h, self.dh).transpose(1, 2)

    def forward(self, q, k, v, mask):
        s = self.split(self.lq(q)) @ self.split(self.lk(k)).transpose(2, 3) / math.sqrt(self.dh)
        if mask is not None:
            s = s.masked_fill(mask == 0, -1e20)
        o = torch.softmax(s, dim=-1) @ self.split(self.lv(v))
        return self.lo(o.transpose(1, 2).reshape(q.shape[0], q.shape[1], -1))


def ffn(d_model, d_ff):
    return nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))


class EncBlock(nn.Module):
    def __init__(self, d_model, nheads, d_ff):
        super().__init__()
        self.att = Attn(d_model, nheads)
        self.ln_a, self.ln_b = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.ff = ffn(d_model, d_ff)

    def forward(self, q, k, v, mask):
        h = self.ln_a(q + self.att(q, k, v, mask))
        return self.ln_b(h + self.ff(h))


class EncBlockFeedsAttention(EncBlock):
    """BUG: the feed-forward reads the attention's output, not the normed residual."""

    def forward(self, q, k, v, mask):
        a = self.att(q, k, v, mask)
        h = self.ln_a(q + a)
        return self.ln_b(h + self.ff(a))


class DecBlock(nn.Module):
    def __init__(self, d_model, nheads, d_ff):
        super().__init__()
        self.own, self.cross = Attn(d_model, nheads), Attn(d_model, nheads)
        self.ln_a, self.ln_b, self.ln_c = (nn.LayerNorm(d_model) for _ in range(3))
        self.ff = ffn(d_model, d_ff)

    def forward(self, q, k, v, src_mask, tgt_mask):
        h = self.ln_a(q + self.own(q, q, q, tgt_mask))
        h = self.ln_b(h + self.cross(h, k, v, src_mask))
        return self.ln_c(h + self.ff(h))


class DecBlockCrossFromInput(DecBlock):
    """BUG: the cross-attention's query is the block's input, not the first sublayer's output."""

    def forward(self, q, k, v, src_mask, tgt_mask):
        h = self.ln_a(q + self.own(q, q, q, tgt_mask))
        h = self.ln_b(h + self.cross(q, k, v, src_mask))
        return self.ln_c(h + self.ff(h))
