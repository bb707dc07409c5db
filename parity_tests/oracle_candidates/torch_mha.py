"""Multi-head attention modules written the way tutorials write them (torch).

MultiHeadAttention, MHAOutputOnly, MultiHeadedAttention, PackedMHA and SelfAttention are correct;
MHATransposedWeight is wrong in one place (docstring).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    """Correct. W_q/W_k/W_v/W_o, forward(Q, K, V, mask=None) -> (output, weights); 0 = hidden."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        assert d_model % num_heads == 0
        self.d_model, self.num_heads, self.d_k = d_model, num_heads, d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def split_heads(self, x):
        b, t, _ = x.size()
        return x.view(b, t, self.num_heads, self.d_k).transpose(1, 2)

    def combine_heads(self, x):
        b, _, t, _ = x.size()
        return x.transpose(1, 2).contiguous().view(b, t, self.d_model)

    def scaled_dot_product_attention(self, Q, K, V, mask=None):
        attn_scores = torch.matmul(Q, K.transpose(-2, -1)) / math.sqrt(self.d_k)
        if mask is not None:
            attn_scores = attn_scores.masked_fill(mask == 0, -1e9)
        attn_probs = torch.softmax(attn_scores, dim=-1)
        return torch.matmul(attn_probs, V), attn_probs

    def forward(self, Q, K, V, mask=None):
        Q = self.split_heads(self.W_q(Q))
        K = self.split_heads(self.W_k(K))
        V = self.split_heads(self.W_v(V))
        out, probs = self.scaled_dot_product_attention(Q, K, V, mask)
        return self.W_o(self.combine_heads(out)), probs


class MHAOutputOnly(nn.Module):
    """Correct. Lower-case w_q..w_o, returns only the output."""

    def __init__(self, d_model, n_heads, dropout=0.1):
        super().__init__()
        self.h, self.dk = n_heads, d_model // n_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, query, key, value, mask=None):
        B = query.shape[0]
        q = self.w_q(query).view(B, -1, self.h, self.dk).transpose(1, 2)
        k = self.w_k(key).view(B, -1, self.h, self.dk).transpose(1, 2)
        v = self.w_v(value).view(B, -1, self.h, self.dk).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / self.dk ** 0.5
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        attn = self.dropout(F.softmax(scores, dim=-1))
        x = (attn @ v).transpose(1, 2).reshape(B, -1, self.h * self.dk)
        return self.w_o(x)


class MultiHeadedAttention(nn.Module):
    """Correct. Heads first, four Linears in a ModuleList, a mask of rank 3 (B, Tq, Tk) that it
    unsqueezes itself (run with --mask-rank 3)."""

    def __init__(self, h, d_model, dropout=0.1):
        super().__init__()
        self.d_k, self.h = d_model // h, h
        self.linears = nn.ModuleList([nn.Linear(d_model, d_model) for _ in range(4)])
        self.attn = None
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, query, key, value, mask=None):
        if mask is not None:
            mask = mask.unsqueeze(1)
        nb = query.size(0)
        query, key, value = [lin(x).view(nb, -1, self.h, self.d_k).transpose(1, 2)
                             for lin, x in zip(self.linears, (query, key, value))]
        scores = query @ key.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        self.attn = self.dropout(scores.softmax(dim=-1))
        x = (self.attn @ value).transpose(1, 2).contiguous().view(nb, -1, self.h * self.d_k)
        return self.linears[-1](x)


class PackedMHA(nn.Module):
    """Correct. One packed (3D, D) input projection like nn.MultiheadAttention's in_proj_weight."""

    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.h = num_heads
        self.in_proj_weight = nn.Parameter(torch.empty(3 * embed_dim, embed_dim))
        self.in_proj_bias = nn.Parameter(torch.zeros(3 * embed_dim))
        self.out_proj = nn.Linear(embed_dim, embed_dim)
        nn.init.xavier_uniform_(self.in_proj_weight)

    def forward(self, query, key, value, attn_mask=None):
        D = query.shape[-1]
        W, b = self.in_proj_weight, self.in_proj_bias
        q = F.linear(query, W[:D], b[:D])
        k = F.linear(key, W[D:2 * D], b[D:2 * D])
        v = F.linear(value, W[2 * D:], b[2 * D:])
        B, Tq, Tk = q.shape[0], q.shape[1], k.shape[1]
        q = q.view(B, Tq, self.h, -1).transpose(1, 2)
        k = k.view(B, Tk, self.h, -1).transpose(1, 2)
        v = v.view(B, Tk, self.h, -1).transpose(1, 2)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
        return self.out_proj(out.transpose(1, 2).reshape(B, Tq, D))


class SelfAttention(nn.Module):
    """Correct self-attention only: forward(x, mask=None)."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.query = nn.Linear(d_model, d_model)
        self.key = nn.Linear(d_model, d_model)
        self.value = nn.Linear(d_model, d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        hd = D // self.n_heads
        q, k, v = (m(x).view(B, T, self.n_heads, hd).transpose(1, 2)
                   for m in (self.query, self.key, self.value))
        att = (q @ k.transpose(-2, -1)) * hd ** -0.5
        if mask is not None:
            att = att.masked_fill(mask == 0, -1e9)
        y = att.softmax(-1) @ v
        return self.proj(y.transpose(1, 2).reshape(B, T, D))


class MHATransposedWeight(MultiHeadAttention):
    """BUG: the query projection multiplies by W instead of W^T (x @ W_q.weight + b)."""

    def forward(self, Q, K, V, mask=None):
        q = self.split_heads(Q @ self.W_q.weight + self.W_q.bias)
        k = self.split_heads(self.W_k(K))
        v = self.split_heads(self.W_v(V))
        out, probs = self.scaled_dot_product_attention(q, k, v, mask)
        return self.W_o(self.combine_heads(out)), probs
