"""Multi-head attention built from linear layers handed in: `qkv_fc` is copied into the query, key
and value projections, `out_fc` is the output projection. Our own code; the BUG twin scales the
scores by the model width instead of the head width."""
from __future__ import annotations

import copy
import math

import torch
from torch import nn


class HandedAttentionLayer(nn.Module):
    def __init__(self, d_model, h, qkv_fc, out_fc, dr_rate=0):
        super().__init__()
        self.d_model, self.h = d_model, h
        self.q_fc, self.k_fc, self.v_fc = (copy.deepcopy(qkv_fc) for _ in range(3))
        self.out_fc = out_fc
        self.dropout = nn.Dropout(dr_rate)

    def scale(self):
        return math.sqrt(self.d_model // self.h)

    def forward(self, *args, query, key, value, mask=None):
        # query (B, Tq, d_model), key / value (B, Tk, d_model); mask (B, 1, Tq, Tk), 1 = may attend
        B = query.size(0)

        def heads(x, fc):                               # (B, T, d) -> (B, h, T, d_k)
            return fc(x).view(B, -1, self.h, self.d_model // self.h).transpose(1, 2)

        q, k, v = heads(query, self.q_fc), heads(key, self.k_fc), heads(value, self.v_fc)
        scores = q @ k.transpose(-2, -1) / self.scale()
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        out = self.dropout(torch.softmax(scores, dim=-1)) @ v
        return self.out_fc(out.transpose(1, 2).contiguous().view(B, -1, self.d_model))


class HandedAttentionLayerBUG(HandedAttentionLayer):
    def scale(self):
        return math.sqrt(self.d_model)                  # the model width, not the head width
