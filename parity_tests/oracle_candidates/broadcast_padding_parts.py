"""Layers taking their key padding as a broadcastable mask part, the way their own data loaders
build it: `pad_mask` of shape (batch, 1, 1, S) (or (batch, 1, S), unsqueezed inside), ANDed with a
causal (1, 1, T, T) mask the attention builds itself, then handed to masked_fill. A decoder whose
self-attention is named for its mask (`masked_attention`) beside a plainly named cross-attention
(`attention`). Right ones match; the BUG twins do not (their bug is named in the class)."""
import math

import torch
from torch import nn


class PaddedAttention(nn.Module):
    """Multi-head attention; `causal` ANDs a lower-triangular keep mask into the padding mask."""

    def __init__(self, d_model, num_heads, causal=False, rank3=False):
        super().__init__()
        self.h, self.causal, self.rank3 = num_heads, causal, rank3
        self.wq = nn.Linear(d_model, d_model)
        self.wk = nn.Linear(d_model, d_model)
        self.wv = nn.Linear(d_model, d_model)
        self.wo = nn.Linear(d_model, d_model)

    def split(self, t):
        b, n, d = t.shape
        return t.view(b, n, self.h, d // self.h).transpose(1, 2)

    def forward(self, q_in, kv_in, pad_mask=None):
        q, k, v = self.split(self.wq(q_in)), self.split(self.wk(kv_in)), self.split(self.wv(kv_in))
        keep = pad_mask
        if keep is not None and self.rank3:                  # (batch, 1, S): add the head axis
            keep = keep.unsqueeze(1)
        if self.causal:
            tril = torch.tril(torch.ones(q.shape[2], k.shape[2], dtype=torch.bool))[None, None]
            keep = tril if keep is None else keep.bool() & tril
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if keep is not None:
            scores = scores.masked_fill(keep == 0, float("-inf"))
        heads = torch.softmax(scores, dim=-1) @ v
        b, h, n, dh = heads.shape
        return self.wo(heads.transpose(1, 2).reshape(b, n, h * dh))


class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class BroadcastPadEncoderLayer(nn.Module):
    """Post-norm encoder layer; pad_attn_mask is (batch, 1, 1, T), 1 where a key is a token."""

    rank3 = False

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.attention = PaddedAttention(d_model, num_heads, rank3=self.rank3)
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff)
        self.drop = nn.Dropout(dropout)

    def forward(self, x, pad_attn_mask):
        x = self.ln1(x + self.drop(self.attention(x, x, pad_attn_mask)))
        return self.ln2(x + self.drop(self.ffn(x)))


class UnsqueezedPadEncoderLayer(BroadcastPadEncoderLayer):
    """The same layer fed (batch, 1, T) padding, as `(src != pad).unsqueeze(-2)` builds it: its
    attention always adds the head axis itself."""

    rank3 = True


class BroadcastPadEncoderLayerBUG(BroadcastPadEncoderLayer):
    """BUG: the feed-forward's residual adds the layer's input instead of the attention's output."""

    def forward(self, x, pad_attn_mask):
        h = self.ln1(x + self.drop(self.attention(x, x, pad_attn_mask)))
        return self.ln2(x + self.drop(self.ffn(h)))


class MaskNamedDecoderLayer(nn.Module):
    """Post-norm decoder layer: `masked_attention` (causal built in) is its self-attention and
    `attention` its cross-attention; forward(enc_out, x, src_pad_mask, tgt_pad_mask), each padding
    (batch, 1, 1, length)."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.masked_attention = PaddedAttention(d_model, num_heads, causal=True)
        self.attention = PaddedAttention(d_model, num_heads)
        self.ffn = FeedForward(d_model, d_ff)
        self.ln1, self.ln2, self.ln3 = (nn.LayerNorm(d_model) for _ in range(3))
        self.drop = nn.Dropout(dropout)

    def cross_query(self, x, h1):
        return h1

    def forward(self, enc_out, x, src_pad_mask, tgt_pad_mask):
        h1 = self.ln1(x + self.drop(self.masked_attention(x, x, tgt_pad_mask)))
        h2 = self.ln2(h1 + self.drop(self.attention(self.cross_query(x, h1), enc_out, src_pad_mask)))
        return self.ln3(h2 + self.drop(self.ffn(h2)))


class MaskNamedDecoderLayerBUG(MaskNamedDecoderLayer):
    """BUG: the cross-attention's queries are the layer's input, not the first sublayer's output."""

    def cross_query(self, x, h1):
        return x
