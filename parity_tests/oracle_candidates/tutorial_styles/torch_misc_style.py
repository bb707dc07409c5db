"""Torch styles for the oracle's reach tests: d2l's older explicit-size MultiHeadAttention, einsum
attention with (d, h, d_head) Parameters, a functional attention taking its weights as arguments, and
Keras-like naming (query_dense / key_dense / value_dense / combine_heads) with pre-norm and post-norm
blocks. Correct unless a docstring says BUG."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


# ---- d2l (older edition): explicit key/query/value sizes, valid_lens --------------------------
def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return F.softmax(X, dim=-1)
    shape = X.shape
    valid_lens = torch.repeat_interleave(valid_lens, shape[1]) if valid_lens.dim() == 1 \
        else valid_lens.reshape(-1)
    X = X.reshape(-1, shape[-1])
    keep = torch.arange(shape[-1], device=X.device)[None, :] < valid_lens[:, None]
    X = X.masked_fill(~keep, -1e6)
    return F.softmax(X.reshape(shape), dim=-1)


class DotProductAttention(nn.Module):
    def __init__(self, dropout, **kwargs):
        super().__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


def transpose_qkv(X, num_heads):
    X = X.reshape(X.shape[0], X.shape[1], num_heads, -1)
    X = X.permute(0, 2, 1, 3)
    return X.reshape(-1, X.shape[2], X.shape[3])


def transpose_output(X, num_heads):
    X = X.reshape(-1, num_heads, X.shape[1], X.shape[2])
    X = X.permute(0, 2, 1, 3)
    return X.reshape(X.shape[0], X.shape[1], -1)


class MultiHeadAttention(nn.Module):
    def __init__(self, key_size, query_size, value_size, num_hiddens, num_heads, dropout,
                 bias=False, **kwargs):
        super().__init__(**kwargs)
        self.num_heads = num_heads
        self.attention = DotProductAttention(dropout)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=bias)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=bias)
        self.W_v = nn.Linear(value_size, num_hiddens, bias=bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)

    def forward(self, queries, keys, values, valid_lens):
        queries = transpose_qkv(self.W_q(queries), self.num_heads)
        keys = transpose_qkv(self.W_k(keys), self.num_heads)
        values = transpose_qkv(self.W_v(values), self.num_heads)
        if valid_lens is not None:
            valid_lens = torch.repeat_interleave(valid_lens, repeats=self.num_heads, dim=0)
        output = self.attention(queries, keys, values, valid_lens)
        return self.W_o(transpose_output(output, self.num_heads))


class MultiHeadAttentionNoRepeat(MultiHeadAttention):
    """BUG: valid_lens not repeated per head (each head row takes another sequence's length)."""

    def forward(self, queries, keys, values, valid_lens):
        q = transpose_qkv(self.W_q(queries), self.num_heads)
        k = transpose_qkv(self.W_k(keys), self.num_heads)
        v = transpose_qkv(self.W_v(values), self.num_heads)
        if valid_lens is not None:
            valid_lens = valid_lens.repeat(self.num_heads)
        return self.W_o(transpose_output(self.attention(q, k, v, valid_lens), self.num_heads))


# ---- einsum with (d, h, d_head) parameters -------------------------------------------------------
class EinsumAttention(nn.Module):
    """Weights as Parameters W_q/W_k/W_v (d_model, heads, d_head), W_o (heads, d_head, d_model)."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        d_head = d_model // n_heads
        self.W_q = nn.Parameter(torch.randn(d_model, n_heads, d_head) / math.sqrt(d_model))
        self.W_k = nn.Parameter(torch.randn(d_model, n_heads, d_head) / math.sqrt(d_model))
        self.W_v = nn.Parameter(torch.randn(d_model, n_heads, d_head) / math.sqrt(d_model))
        self.W_o = nn.Parameter(torch.randn(n_heads, d_head, d_model) / math.sqrt(d_model))

    def forward(self, query, key, value, mask=None):
        q = torch.einsum("btd,dhk->bhtk", query, self.W_q)
        k = torch.einsum("bsd,dhk->bhsk", key, self.W_k)
        v = torch.einsum("bsd,dhk->bhsk", value, self.W_v)
        scores = torch.einsum("bhtk,bhsk->bhts", q, k) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        attn = scores.softmax(-1)
        z = torch.einsum("bhts,bhsk->bhtk", attn, v)
        return torch.einsum("bhtk,hkd->btd", z, self.W_o), attn


class EinsumAttentionKeyForValue(EinsumAttention):
    """BUG: the values are projected with W_k."""

    def forward(self, query, key, value, mask=None):
        W_v = self.W_v
        self.W_v = self.W_k
        try:
            return super().forward(query, key, value, mask)
        finally:
            self.W_v = W_v


# ---- functional attention, weights passed as arguments -----------------------------------------
def multi_head_attention(query, key, value, w_q, w_k, w_v, w_o, num_heads, mask=None):
    """F.linear-only attention; weights (out, in), no biases."""
    B, T, D = query.shape
    dh = D // num_heads

    def split(x, w):
        return F.linear(x, w).view(B, -1, num_heads, dh).transpose(1, 2)

    q, k, v = split(query, w_q), split(key, w_k), split(value, w_v)
    s = q @ k.transpose(-1, -2) / math.sqrt(dh)
    if mask is not None:
        s = s.masked_fill(~mask.bool(), float("-inf"))
    a = s.softmax(-1)
    return F.linear((a @ v).transpose(1, 2).reshape(B, T, D), w_o), a


def multi_head_attention_no_scale(query, key, value, w_q, w_k, w_v, w_o, num_heads, mask=None):
    """BUG: forgets the 1/sqrt(d_head) scale."""
    s = math.sqrt(query.shape[-1] // num_heads)
    return multi_head_attention(query * s, key, value, w_q, w_k, w_v, w_o, num_heads, mask)


# ---- Keras-like naming --------------------------------------------------------------------------
class MultiHeadSelfAttention(nn.Module):
    def __init__(self, embed_dim, num_heads=8):
        super().__init__()
        self.num_heads, self.projection_dim = num_heads, embed_dim // num_heads
        self.query_dense = nn.Linear(embed_dim, embed_dim)
        self.key_dense = nn.Linear(embed_dim, embed_dim)
        self.value_dense = nn.Linear(embed_dim, embed_dim)
        self.combine_heads = nn.Linear(embed_dim, embed_dim)

    def separate_heads(self, x, batch_size):
        return x.reshape(batch_size, -1, self.num_heads, self.projection_dim).permute(0, 2, 1, 3)

    def attention(self, query, key, value):
        score = query @ key.transpose(-1, -2)
        weights = torch.softmax(score / math.sqrt(key.shape[-1]), dim=-1)
        return weights @ value, weights

    def forward(self, inputs):
        b = inputs.shape[0]
        q = self.separate_heads(self.query_dense(inputs), b)
        k = self.separate_heads(self.key_dense(inputs), b)
        v = self.separate_heads(self.value_dense(inputs), b)
        out, weights = self.attention(q, k, v)
        out = out.permute(0, 2, 1, 3).reshape(b, -1, self.num_heads * self.projection_dim)
        return self.combine_heads(out)


class MultiHeadSelfAttentionNoPermute(MultiHeadSelfAttention):
    """BUG: merges heads without moving the head axis back."""

    def forward(self, inputs):
        b = inputs.shape[0]
        q, k, v = (self.separate_heads(f(inputs), b)
                   for f in (self.query_dense, self.key_dense, self.value_dense))
        out, _ = self.attention(q, k, v)
        return self.combine_heads(out.reshape(b, -1, self.num_heads * self.projection_dim))


class TransformerBlock(nn.Module):
    """Keras-example block: post-norm, epsilon 1e-6, ffn a Sequential."""

    def __init__(self, embed_dim, num_heads, ff_dim, rate=0.1, epsilon=1e-6):
        super().__init__()
        self.att = MultiHeadSelfAttention(embed_dim, num_heads)
        self.ffn = nn.Sequential(nn.Linear(embed_dim, ff_dim), nn.ReLU(), nn.Linear(ff_dim, embed_dim))
        self.layernorm1 = nn.LayerNorm(embed_dim, eps=epsilon)
        self.layernorm2 = nn.LayerNorm(embed_dim, eps=epsilon)
        self.dropout1 = nn.Dropout(rate)
        self.dropout2 = nn.Dropout(rate)

    def forward(self, inputs):
        out1 = self.layernorm1(inputs + self.dropout1(self.att(inputs)))
        return self.layernorm2(out1 + self.dropout2(self.ffn(out1)))


class PreNormBlock(TransformerBlock):
    """Pre-norm: x + att(ln1(x)), then + ffn(ln2(.))."""

    def forward(self, inputs):
        x = inputs + self.dropout1(self.att(self.layernorm1(inputs)))
        return x + self.dropout2(self.ffn(self.layernorm2(x)))


class PreNormBlockNoFinalResidual(PreNormBlock):
    """BUG: the feed-forward sublayer has no residual."""

    def forward(self, inputs):
        x = inputs + self.att(self.layernorm1(inputs))
        return self.ffn(self.layernorm2(x))


class StackedHeadsAttention(nn.Module):
    """Interpretability-library layout: W_Q/W_K/W_V (n_heads, d_model, d_head), biases (n_heads,
    d_head), W_O (n_heads, d_head, d_model), b_O (d_model)."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        d_head = d_model // n_heads
        for n in "QKV":
            setattr(self, f"W_{n}", nn.Parameter(torch.randn(n_heads, d_model, d_head) * 0.2))
            setattr(self, f"b_{n}", nn.Parameter(torch.zeros(n_heads, d_head)))
        self.W_O = nn.Parameter(torch.randn(n_heads, d_head, d_model) * 0.2)
        self.b_O = nn.Parameter(torch.zeros(d_model))

    def forward(self, query, key, value, mask=None):
        q = torch.einsum("btd,hdk->bhtk", query, self.W_Q) + self.b_Q[None, :, None]
        k = torch.einsum("bsd,hdk->bhsk", key, self.W_K) + self.b_K[None, :, None]
        v = torch.einsum("bsd,hdk->bhsk", value, self.W_V) + self.b_V[None, :, None]
        s = torch.einsum("bhtk,bhsk->bhts", q, k) / math.sqrt(q.shape[-1])
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        z = torch.einsum("bhts,bhsk->bhtk", s.softmax(-1), v)
        return torch.einsum("bhtk,hkd->btd", z, self.W_O) + self.b_O


class StackedHeadsAttentionBiasKOnQ(StackedHeadsAttention):
    """BUG: the queries get b_Q + b_K."""

    def forward(self, query, key, value, mask=None):
        q = torch.einsum("btd,hdk->bhtk", query, self.W_Q) + (self.b_Q + self.b_K)[None, :, None]
        k = torch.einsum("bsd,hdk->bhsk", key, self.W_K) + self.b_K[None, :, None]
        v = torch.einsum("bsd,hdk->bhsk", value, self.W_V) + self.b_V[None, :, None]
        s = torch.einsum("bhtk,bhsk->bhts", q, k) / math.sqrt(q.shape[-1])
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        z = torch.einsum("bhts,bhsk->bhtk", s.softmax(-1), v)
        return torch.einsum("bhtk,hkd->btd", z, self.W_O) + self.b_O


class BareParamAttention(nn.Module):
    """Square nn.Parameter matrices used as x @ W + b (no nn.Linear), self-attention."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        for n in "qkvo":
            setattr(self, f"W_{n}", nn.Parameter(torch.randn(d_model, d_model) / math.sqrt(d_model)))
            setattr(self, f"b_{n}", nn.Parameter(torch.zeros(d_model)))

    def out_proj(self, z):
        return z @ self.W_o + self.b_o

    def forward(self, x, mask=None):
        B, T, D = x.shape
        q, k, v = ((x @ getattr(self, f"W_{n}") + getattr(self, f"b_{n}"))
                   .view(B, T, self.h, D // self.h).transpose(1, 2) for n in "qkv")
        s = q @ k.transpose(-1, -2) / math.sqrt(D // self.h)
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        a = s.softmax(-1)
        return self.out_proj((a @ v).transpose(1, 2).reshape(B, T, D)), a


class BareParamAttentionMixedLayout(BareParamAttention):
    """BUG: the output projection alone uses W_o transposed (x @ W_o.T): layouts mixed."""

    def out_proj(self, z):
        return z @ self.W_o.T + self.b_o


class PositionalEncoding(nn.Module):
    """d2l's positional encoding: the table is computed in float32 explicitly (dtype=torch.float32),
    so it is float32-accurate only: right under --dtype float32."""

    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.P = torch.zeros((1, max_len, num_hiddens))
        X = torch.arange(max_len, dtype=torch.float32).reshape(-1, 1) / torch.pow(
            10000, torch.arange(0, num_hiddens, 2, dtype=torch.float32) / num_hiddens)
        self.P[:, :, 0::2] = torch.sin(X)
        self.P[:, :, 1::2] = torch.cos(X[:, : num_hiddens // 2])

    def forward(self, X):
        X = X + self.P[:, : X.shape[1], :].to(X.device)
        return self.dropout(X)
