"""Blocks that do Add & Norm themselves: an attention block without projection biases that returns
LayerNorm(x + MHA(x)), one with biases, a feed-forward block doing the same, and a layer built from
them. Each is correct unless its docstring says BUG.
"""
import math

import torch
import torch.nn as nn


class NormedAttention(nn.Module):
    """Attention whose forward returns LayerNorm(q + MHA(q, k, v)); projections without biases."""

    bias = False

    def __init__(self, n_head, d_model, d_k, d_v, dropout=0.1):
        super().__init__()
        self.n_head, self.d_k, self.d_v = n_head, d_k, d_v
        self.w_q = nn.Linear(d_model, n_head * d_k, bias=self.bias)
        self.w_k = nn.Linear(d_model, n_head * d_k, bias=self.bias)
        self.w_v = nn.Linear(d_model, n_head * d_v, bias=self.bias)
        self.proj = nn.Linear(n_head * d_v, d_model, bias=self.bias)
        self.drop = nn.Dropout(dropout)
        self.norm = nn.LayerNorm(d_model, eps=1e-5)

    def forward(self, q, k, v, mask=None):
        b, n, _ = q.shape
        m = k.shape[1]
        residual = q
        qh = self.w_q(q).view(b, n, self.n_head, self.d_k).transpose(1, 2)
        kh = self.w_k(k).view(b, m, self.n_head, self.d_k).transpose(1, 2)
        vh = self.w_v(v).view(b, m, self.n_head, self.d_v).transpose(1, 2)
        s = qh @ kh.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            s = s.masked_fill(mask.unsqueeze(1) == 0, -1e9) if mask.dim() == 3 else \
                s.masked_fill(mask == 0, -1e9)
        out = (torch.softmax(s, dim=-1) @ vh).transpose(1, 2).reshape(b, n, -1)
        return self.norm(self.add(residual, self.drop(self.proj(out))))

    def add(self, residual, y):
        return residual + y


class NormedAttentionBiased(NormedAttention):
    """The same with projection biases (every reference parameter has a place; the norm does not)."""

    bias = True


class NormedAttentionNoResidual(NormedAttentionBiased):
    """BUG: the residual is not added before the norm."""

    def add(self, residual, y):
        return y


class NormedFeedForward(nn.Module):
    """Feed-forward returning LayerNorm(x + W2 relu(W1 x))."""

    def __init__(self, d_in, d_hid, dropout=0.1):
        super().__init__()
        self.w_1 = nn.Linear(d_in, d_hid)
        self.w_2 = nn.Linear(d_hid, d_in)
        self.norm = nn.LayerNorm(d_in, eps=1e-5)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        return self.norm(x + self.drop(self.w_2(torch.relu(self.w_1(x)))))


class NormedBlocksLayer(nn.Module):
    """An encoder layer made of the two blocks above (post-norm, as the reference)."""

    attention = NormedAttentionBiased

    def __init__(self, d_model, d_inner, n_head, d_k, d_v, dropout=0.1):
        super().__init__()
        self.slf_attn = self.attention(n_head, d_model, d_k, d_v, dropout=dropout)
        self.pos_ffn = NormedFeedForward(d_model, d_inner, dropout=dropout)

    def forward(self, x, mask=None):
        return self.pos_ffn(self.slf_attn(x, x, x, mask=mask))


class NormedBlocksLayerNoResidual(NormedBlocksLayer):
    """BUG: its attention block drops the residual."""

    attention = NormedAttentionNoResidual
