"""Layers that take their sequences time-first, (T, B, d), as fairseq-style code and
torch.nn.MultiheadAttention without batch_first do: the attention folds batch and heads together
as (T, B*H, d_k). Our own code in that style; the wrong twins say BUG."""
from __future__ import annotations

import math

import torch
from torch import nn


class TimeFirstAttention(nn.Module):
    """Multi-head attention on (T, B, d) query and (S, B, d) key/value; mask (B, 1, T, S), 0 = hidden."""

    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.h, self.dk = num_heads, embed_dim // num_heads
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(embed_dim, embed_dim)
                                                                for _ in range(4))

    def forward(self, query, key, value, mask=None):
        T, B, d = query.shape
        S = key.shape[0]

        def fold(t, n):                                   # (n, B, d) -> (B*H, n, d_k)
            return t.reshape(n, B * self.h, self.dk).transpose(0, 1)

        q, k, v = fold(self.q_proj(query), T), fold(self.k_proj(key), S), fold(self.v_proj(value), S)
        s = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(self.dk)           # (B*H, T, S)
        if mask is not None:
            keep = mask.expand(B, self.h, T, S).reshape(B * self.h, T, S)
            s = s.masked_fill(keep == 0, float("-inf"))
        w = torch.softmax(s, dim=-1)
        y = torch.bmm(w, v).transpose(0, 1).reshape(T, B, d)
        return self.out_proj(y), w.view(B, self.h, T, S)


class TimeFirstAttentionBUG(TimeFirstAttention):
    """BUG: the heads are unfolded in the wrong order (heads and batch swapped)."""

    def forward(self, query, key, value, mask=None):
        T, B, d = query.shape
        S = key.shape[0]

        def fold(t, n):
            return t.reshape(n, self.h * B, self.dk).transpose(0, 1)

        q, k, v = fold(self.q_proj(query), T), fold(self.k_proj(key), S), fold(self.v_proj(value), S)
        s = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(self.dk)
        w = torch.softmax(s, dim=-1)
        y = torch.bmm(w, v).reshape(B, self.h, T, self.dk).permute(2, 0, 1, 3).reshape(T, B, d)
        return self.out_proj(y), w.view(B, self.h, T, S)


class TimeFirstEncoderLayer(nn.Module):
    """Post-norm encoder layer on (T, B, d)."""

    def __init__(self, embed_dim, num_heads, ffn_dim):
        super().__init__()
        self.self_attn = TimeFirstAttention(embed_dim, num_heads)
        self.fc1, self.fc2 = nn.Linear(embed_dim, ffn_dim), nn.Linear(ffn_dim, embed_dim)
        self.self_attn_layer_norm, self.final_layer_norm = nn.LayerNorm(embed_dim), nn.LayerNorm(embed_dim)

    def forward(self, x, mask=None):
        x = self.self_attn_layer_norm(x + self.self_attn(x, x, x, mask)[0])
        return self.final_layer_norm(x + self.fc2(torch.relu(self.fc1(x))))


class TimeFirstPreNormEncoderLayer(TimeFirstEncoderLayer):
    """Pre-norm encoder layer on (T, B, d) (fairseq's normalize_before)."""

    def forward(self, x, mask=None):
        h = self.self_attn_layer_norm(x)
        x = x + self.self_attn(h, h, h, mask)[0]
        return x + self.fc2(torch.relu(self.fc1(self.final_layer_norm(x))))


class TimeFirstEncoderLayerBUG(TimeFirstEncoderLayer):
    """BUG: the feed-forward reads the sublayer input, not the attention's output."""

    def forward(self, x, mask=None):
        h = self.self_attn_layer_norm(x + self.self_attn(x, x, x, mask)[0])
        return self.final_layer_norm(h + self.fc2(torch.relu(self.fc1(x))))


class TimeFirstDecoderLayer(nn.Module):
    """Post-norm decoder layer on (T, B, d) targets and an (S, B, d) memory."""

    def __init__(self, embed_dim, num_heads, ffn_dim):
        super().__init__()
        self.self_attn, self.encoder_attn = TimeFirstAttention(embed_dim, num_heads), \
            TimeFirstAttention(embed_dim, num_heads)
        self.fc1, self.fc2 = nn.Linear(embed_dim, ffn_dim), nn.Linear(ffn_dim, embed_dim)
        self.n1, self.n2, self.n3 = (nn.LayerNorm(embed_dim) for _ in range(3))

    def forward(self, x, encoder_out, self_attn_mask=None, encoder_mask=None):
        x = self.n1(x + self.self_attn(x, x, x, self_attn_mask)[0])
        x = self.n2(x + self.encoder_attn(x, encoder_out, encoder_out, encoder_mask)[0])
        return self.n3(x + self.fc2(torch.relu(self.fc1(x))))


class TimeFirstPaddedEncoderLayer(TimeFirstEncoderLayer):
    """The same layer taking the key padding (B, T) as a required argument (1 = a real token)."""

    def forward(self, x, src_pad_mask):
        keep = src_pad_mask[:, None, None, :]
        x = self.self_attn_layer_norm(x + self.self_attn(x, x, x, keep)[0])
        return self.final_layer_norm(x + self.fc2(torch.relu(self.fc1(x))))


class TimeFirstPaddingFlagEncoderLayer(TimeFirstEncoderLayer):
    """The same layer taking a required key padding flag (B, T), True where a key is padding."""

    def forward(self, x, encoder_key_padding_mask):
        keep = (~encoder_key_padding_mask.bool())[:, None, None, :]
        x = self.self_attn_layer_norm(x + self.self_attn(x, x, x, keep)[0])
        return self.final_layer_norm(x + self.fc2(torch.relu(self.fc1(x))))


class TimeFirstPaddingFlagEncoderLayerBUG(TimeFirstPaddingFlagEncoderLayer):
    """BUG: the attention's residual is missing."""

    def forward(self, x, encoder_key_padding_mask):
        keep = (~encoder_key_padding_mask.bool())[:, None, None, :]
        x = self.self_attn_layer_norm(self.self_attn(x, x, x, keep)[0])
        return self.final_layer_norm(x + self.fc2(torch.relu(self.fc1(x))))


class TimeFirstPositionalEncoding(nn.Module):
    """Sinusoidal positions added to x (T, B, d): a (max_len, 1, d) buffer cut to T rows, then
    dropout (PyTorch tutorial style)."""

    def __init__(self, d_model, dropout=0.1, max_len=500):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        t = torch.arange(max_len, dtype=torch.float64)[:, None]                # (max_len, 1)
        freq = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
        table = torch.zeros(max_len, 1, d_model, dtype=torch.float64)
        table[:, 0, 0::2] = torch.sin(t * freq)
        table[:, 0, 1::2] = torch.cos(t * freq[: d_model // 2])
        self.register_buffer("table", table)

    def forward(self, x):
        return self.drop(x + self.table[: x.size(0)].to(x.dtype))


class TimeFirstPositionalEncodingBUG(TimeFirstPositionalEncoding):
    """BUG: the rows are taken from position 1 on (an off-by-one)."""

    def forward(self, x):
        return self.drop(x + self.table[1: x.size(0) + 1].to(x.dtype))
