"""Torch candidates in the styles people write them (forward side). Correct unless a docstring says
BUG. Written for these tests, after the patterns of textbook and tutorial code."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


# -- d2l style: (batch*heads, T, d) attention with valid_lens, lazy layers, no biases ------------------
def sequence_mask(X, valid_len, value=0.0):
    maxlen = X.size(1)
    mask = torch.arange(maxlen, dtype=torch.float32, device=X.device)[None, :] < valid_len[:, None]
    X[~mask] = value
    return X


def masked_softmax(X, valid_lens):
    if valid_lens is None:
        return F.softmax(X, dim=-1)
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = torch.repeat_interleave(valid_lens, shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    X = sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
    return F.softmax(X.reshape(shape), dim=-1)


class DotProductAttention(nn.Module):
    """Scaled dot-product attention on (batch*heads, T, d) tensors, masks as valid lengths."""

    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


class DotProductAttentionUnscaled(DotProductAttention):
    """BUG: forgets to divide the scores by sqrt(d)."""

    def forward(self, queries, keys, values, valid_lens=None):
        scores = torch.bmm(queries, keys.transpose(1, 2))
        return torch.bmm(masked_softmax(scores, valid_lens), values)


class LazyMultiHeadAttention(nn.Module):
    """Multi-head attention with LazyLinear projections (no biases) and valid_lens."""

    def __init__(self, num_hiddens, num_heads, dropout, bias=False):
        super().__init__()
        self.num_heads = num_heads
        self.attention = DotProductAttention(dropout)
        self.W_q = nn.LazyLinear(num_hiddens, bias=bias)
        self.W_k = nn.LazyLinear(num_hiddens, bias=bias)
        self.W_v = nn.LazyLinear(num_hiddens, bias=bias)
        self.W_o = nn.LazyLinear(num_hiddens, bias=bias)

    def transpose_qkv(self, X):
        X = X.reshape(X.shape[0], X.shape[1], self.num_heads, -1)
        return X.permute(0, 2, 1, 3).reshape(-1, X.shape[1], X.shape[3])

    def transpose_output(self, X):
        X = X.reshape(-1, self.num_heads, X.shape[1], X.shape[2])
        return X.permute(0, 2, 1, 3).reshape(X.shape[0], X.shape[2], -1)

    def forward(self, queries, keys, values, valid_lens):
        queries = self.transpose_qkv(self.W_q(queries))
        keys = self.transpose_qkv(self.W_k(keys))
        values = self.transpose_qkv(self.W_v(values))
        if valid_lens is not None:
            valid_lens = torch.repeat_interleave(valid_lens, repeats=self.num_heads, dim=0)
        return self.W_o(self.transpose_output(self.attention(queries, keys, values, valid_lens)))


class LazyMultiHeadAttentionNoPermute(LazyMultiHeadAttention):
    """BUG: merges the heads back without moving the head axis (a reshape where a permute belongs)."""

    def transpose_output(self, X):
        return X.reshape(-1, X.shape[1] * self.num_heads, X.shape[2]).reshape(
            X.shape[0] // self.num_heads, X.shape[1], -1)


# -- per-head modules (a ModuleList of heads, each with its own d_model -> head_size Linear layers) --
class Head(nn.Module):
    def __init__(self, n_embd, head_size):
        super().__init__()
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)

    def forward(self, x, scale_power=-0.5):
        k, q = self.key(x), self.query(x)
        wei = F.softmax(q @ k.transpose(-2, -1) * k.shape[-1] ** scale_power, dim=-1)
        return wei @ self.value(x)


class HeadsAttention(nn.Module):
    """Self-attention as a list of heads, concatenated, then a projection."""

    power = -0.5

    def __init__(self, num_heads, head_size, n_embd):
        super().__init__()
        self.heads = nn.ModuleList([Head(n_embd, head_size) for _ in range(num_heads)])
        self.proj = nn.Linear(head_size * num_heads, n_embd)

    def forward(self, x):
        return self.proj(torch.cat([h(x, self.power) for h in self.heads], dim=-1))


class HeadsAttentionBadScale(HeadsAttention):
    """BUG: divides the scores by head_size instead of sqrt(head_size)."""

    power = -1.0


# -- one list of inputs -------------------------------------------------------------------------------
class ListInputAttention(nn.Module):
    """forward(self, inputs, mask=None) with q, k, v = inputs."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.q_proj, self.k_proj = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.v_proj, self.out_proj = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, inputs, mask=None):
        q, k, v = inputs
        B, D = q.shape[0], q.shape[-1]
        q, k, v = (p(t).view(B, -1, self.h, D // self.h).transpose(1, 2)
                   for p, t in ((self.q_proj, q), (self.k_proj, k), (self.v_proj, v)))
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=None if mask is None else mask.bool())
        return self.out_proj(y.transpose(1, 2).reshape(B, -1, D))


class ListInputAttentionSwapped(ListInputAttention):
    """BUG: unpacks the list as (q, v, k)."""

    def forward(self, inputs, mask=None):
        q, k, v = inputs
        return super().forward([q, v, k], mask)


# -- positional modules that return the table -----------------------------------------------------------
class PositionalTable(nn.Module):
    """forward(x) returns pe[:, :T] (1, T, d); the caller adds it."""

    swap = False

    def __init__(self, d_model, max_len=5000):
        super().__init__()
        pos = torch.arange(max_len, dtype=torch.float64)[:, None]
        div = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, d_model, dtype=torch.float64)
        pe[:, 0::2] = torch.cos(pos * div) if self.swap else torch.sin(pos * div)
        pe[:, 1::2] = torch.sin(pos * div) if self.swap else torch.cos(pos * div)
        self.register_buffer("pe", pe[None])

    def forward(self, x):
        return self.pe[:, : x.size(1)].to(x.dtype)


class PositionalTableSwapped(PositionalTable):
    """BUG: cos on even channels, sin on odd ones."""

    swap = True


# -- Add & Norm inside the attention and feed-forward blocks --------------------------------------------
class NormedMultiHeadAttention(nn.Module):
    """Attention that adds its residual and normalises itself: LayerNorm(q + MHA(q, k, v))."""

    def __init__(self, n_head, d_model, d_k, d_v, dropout=0.1):
        super().__init__()
        self.n_head, self.d_k, self.d_v = n_head, d_k, d_v
        self.w_qs = nn.Linear(d_model, n_head * d_k)
        self.w_ks = nn.Linear(d_model, n_head * d_k)
        self.w_vs = nn.Linear(d_model, n_head * d_v)
        self.fc = nn.Linear(n_head * d_v, d_model)
        self.dropout = nn.Dropout(dropout)
        self.layer_norm = nn.LayerNorm(d_model, eps=1e-5)

    def forward(self, q, k, v, mask=None):
        B, Tq, Tk, H = q.size(0), q.size(1), k.size(1), self.n_head
        residual = q
        q = self.w_qs(q).view(B, Tq, H, self.d_k).transpose(1, 2)
        k = self.w_ks(k).view(B, Tk, H, self.d_k).transpose(1, 2)
        v = self.w_vs(v).view(B, Tk, H, self.d_v).transpose(1, 2)
        s = q @ k.transpose(-2, -1) / self.d_k ** 0.5
        if mask is not None:
            s = s.masked_fill(mask == 0, -1e9)
        attn = F.softmax(s, dim=-1)
        out = (attn @ v).transpose(1, 2).contiguous().view(B, Tq, -1)
        return self.layer_norm(self.dropout(self.fc(out)) + residual), attn


class NormedFeedForward(nn.Module):
    norm_before_residual = False

    def __init__(self, d_in, d_hid, dropout=0.1):
        super().__init__()
        self.w_1, self.w_2 = nn.Linear(d_in, d_hid), nn.Linear(d_hid, d_in)
        self.layer_norm = nn.LayerNorm(d_in, eps=1e-5)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        y = self.dropout(self.w_2(F.relu(self.w_1(x))))
        if self.norm_before_residual:
            return self.layer_norm(y) + x
        return self.layer_norm(y + x)


class NormedEncoderLayer(nn.Module):
    """An encoder layer whose norms live inside its two blocks; returns (output, attention)."""

    ffn_class = NormedFeedForward

    def __init__(self, d_model, d_inner, n_head, d_k, d_v, dropout=0.1):
        super().__init__()
        self.slf_attn = NormedMultiHeadAttention(n_head, d_model, d_k, d_v, dropout=dropout)
        self.pos_ffn = self.ffn_class(d_model, d_inner, dropout=dropout)

    def forward(self, enc_input, slf_attn_mask=None):
        out, attn = self.slf_attn(enc_input, enc_input, enc_input, mask=slf_attn_mask)
        return self.pos_ffn(out), attn


class _NormFirstFFN(NormedFeedForward):
    norm_before_residual = True


class NormedEncoderLayerBad(NormedEncoderLayer):
    """BUG: the feed-forward block normalises before adding the residual."""

    ffn_class = _NormFirstFFN


# -- a textbook encoder block: AddNorm modules, lazy layers, valid_lens ---------------------------------
class AddNorm(nn.Module):
    def __init__(self, norm_shape, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.ln = nn.LayerNorm(norm_shape)

    def forward(self, X, Y):
        return self.ln(self.dropout(Y) + X)


class PositionWiseFFN(nn.Module):
    def __init__(self, ffn_num_hiddens, ffn_num_outputs):
        super().__init__()
        self.dense1 = nn.LazyLinear(ffn_num_hiddens)
        self.relu = nn.ReLU()
        self.dense2 = nn.LazyLinear(ffn_num_outputs)

    def forward(self, X):
        return self.dense2(self.relu(self.dense1(X)))


class TransformerEncoderBlock(nn.Module):
    """Post-norm encoder block: forward(X, valid_lens)."""

    def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias=False):
        super().__init__()
        self.attention = LazyMultiHeadAttention(num_hiddens, num_heads, dropout, use_bias)
        self.addnorm1 = AddNorm(num_hiddens, dropout)
        self.ffn = PositionWiseFFN(ffn_num_hiddens, num_hiddens)
        self.addnorm2 = AddNorm(num_hiddens, dropout)

    def forward(self, X, valid_lens):
        Y = self.addnorm1(X, self.attention(X, X, X, valid_lens))
        return self.addnorm2(Y, self.ffn(Y))


class TransformerEncoderBlockBad(TransformerEncoderBlock):
    """BUG: the second residual adds the block's input X instead of Y."""

    def forward(self, X, valid_lens):
        Y = self.addnorm1(X, self.attention(X, X, X, valid_lens))
        return self.addnorm2(X, self.ffn(Y))


class SelfAttentionValidLens(LazyMultiHeadAttention):
    """Self-attention with lengths: forward(X, valid_lens)."""

    def forward(self, X, valid_lens=None):
        return super().forward(X, X, X, valid_lens)


# -- a position-wise feed-forward written with kernel-size-1 convolutions ------------------------------
class ConvFeedForward(nn.Module):
    act = staticmethod(F.relu)

    def __init__(self, d_model, d_ff):
        super().__init__()
        self.w_1 = nn.Conv1d(d_model, d_ff, 1)
        self.w_2 = nn.Conv1d(d_ff, d_model, 1)

    def forward(self, x):
        return self.w_2(self.act(self.w_1(x.transpose(1, 2)))).transpose(1, 2)


class ConvFeedForwardNoAct(ConvFeedForward):
    """BUG: no activation between the two layers."""

    act = staticmethod(lambda t: t)
