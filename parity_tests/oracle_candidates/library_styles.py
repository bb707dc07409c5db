"""Candidates written the way widely used libraries and tutorials write them (our own code, in
their styles), each with a deliberately wrong twin where a verdict is at stake:

- a GPT-2 style attention on a `Conv1D` layer class that keeps every weight as (in, out), packed
  q|k|v (d, 3d) and a square output projection, built from a config object it reads for
  attributes no hyperparameter names (scale_attn_weights, attn_pdrop, chunk sizes);
- a feed-forward reading a config attribute whose name says nothing (an interface error naming it);
- nanoGPT-style `LayerNorm(ndim, bias)` with a required bias switch;
- an attention function with a required mask argument;
- a NumPy-free self-attention-only module called through an adapter (`run(x)`);
- a LayerNorm whose eps is fixed in the code, built through an adapter.
"""
from __future__ import annotations

import math

import torch
import torch.nn as nn


class Conv1D(nn.Module):
    """y = x @ W + b with W kept as (in, out), as GPT-2's layer class does."""

    def __init__(self, nf, nx):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(nx, nf) * 0.02)
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        return x @ self.weight + self.bias


class Conv1DAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        d = config.n_embd
        self.n_head = config.n_head
        self.scale = config.scale_attn_weights
        self.c_attn = Conv1D(3 * d, d)
        self.c_proj = Conv1D(d, d)
        self.drop = nn.Dropout(config.attn_pdrop)

    def forward(self, x, attention_mask=None):
        B, T, D = x.shape
        q, k, v = self.c_attn(x).split(D, dim=2)
        q, k, v = (t.view(B, T, self.n_head, D // self.n_head).transpose(1, 2) for t in (q, k, v))
        s = q @ k.transpose(-1, -2)
        if self.scale:
            s = s / math.sqrt(D // self.n_head)
        if attention_mask is not None:
            s = s.masked_fill(~attention_mask, float("-inf"))
        w = self.drop(torch.softmax(s, dim=-1))
        y = (w @ v).transpose(1, 2).reshape(B, T, D)
        return self.c_proj(y), w


class Conv1DAttentionModelScale(Conv1DAttention):
    """Wrong: scores divided by sqrt(d_model) instead of sqrt(d_k)."""

    def forward(self, x, attention_mask=None):
        B, T, D = x.shape
        q, k, v = self.c_attn(x).split(D, dim=2)
        q, k, v = (t.view(B, T, self.n_head, D // self.n_head).transpose(1, 2) for t in (q, k, v))
        s = q @ k.transpose(-1, -2) / math.sqrt(D)
        if attention_mask is not None:
            s = s.masked_fill(~attention_mask, float("-inf"))
        w = torch.softmax(s, dim=-1)
        return self.c_proj((w @ v).transpose(1, 2).reshape(B, T, D)), w


class ChunkedFFN(nn.Module):
    """Reads attributes real configs carry and no hyperparameter names."""

    def __init__(self, config):
        super().__init__()
        self.chunk = config.chunk_size_feed_forward
        self.up = nn.Linear(config.hidden_size, config.intermediate_size)
        self.down = nn.Linear(config.intermediate_size, config.hidden_size)
        self.drop = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, x):
        return self.drop(self.down(torch.relu(self.up(x))))


class MysteryConfigFFN(ChunkedFFN):
    """Reads an attribute whose name says nothing: the oracle must ask for it."""

    def __init__(self, config):
        super().__init__(config)
        self.gain = float(config.mystery_gain)

    def forward(self, x):
        return self.gain * self.down(torch.relu(self.up(x)))


class BiasSwitchLayerNorm(nn.Module):
    """nanoGPT style: LayerNorm(ndim, bias) with a required bias switch."""

    def __init__(self, ndim, bias):
        super().__init__()
        assert isinstance(bias, bool), f"bias must be a bool, got {bias!r}"
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, x):
        return nn.functional.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)


class DropoutProbabilityFFN(nn.Module):
    def __init__(self, d_model, d_ff, dropout_probability):
        super().__init__()
        assert 0.0 <= dropout_probability < 1.0, f"dropout probability, got {dropout_probability}"
        self.l1, self.l2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
        self.drop = nn.Dropout(dropout_probability)

    def forward(self, x):
        return self.l2(self.drop(torch.relu(self.l1(x))))


def attention_required_mask(q, k, v, mask):
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    w = torch.softmax(s.masked_fill(~mask, float("-inf")), dim=-1)
    return w @ v, w


class SelfOnlyAttention(nn.Module):
    """Self-attention with a forward named run(x): checked through an adapter."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.wq, self.wk = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.wv, self.wo = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def run(self, x, keep=None):
        B, T, D = x.shape
        q, k, v = (f(x).view(B, T, self.h, D // self.h).transpose(1, 2)
                   for f in (self.wq, self.wk, self.wv))
        s = q @ k.transpose(-1, -2) / math.sqrt(D // self.h)
        if keep is not None:
            s = s.masked_fill(~keep, float("-inf"))
        w = torch.softmax(s, dim=-1)
        return self.wo((w @ v).transpose(1, 2).reshape(B, T, D))


class FixedEpsLayerNorm(nn.Module):
    """eps fixed in the code at 1e-6; its forward is run(x)."""

    def __init__(self, d_model):
        super().__init__()
        self.eps = 1e-6
        self.gain, self.shift = nn.Parameter(torch.ones(d_model)), nn.Parameter(torch.zeros(d_model))

    def run(self, x):
        mu = x.mean(-1, keepdim=True)
        var = ((x - mu) ** 2).mean(-1, keepdim=True)
        return self.gain * (x - mu) / torch.sqrt(var + self.eps) + self.shift


# -- whole layers whose blocks and norms no name matches --------------------------------------------
class TinyAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.q, self.k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.v, self.o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, x, keep=None):
        B, T, D = x.shape
        q, k, v = (f(x).view(B, T, self.h, D // self.h).transpose(1, 2) for f in (self.q, self.k, self.v))
        s = q @ k.transpose(-1, -2) / math.sqrt(D // self.h)
        if keep is not None:
            s = s.masked_fill(~keep, float("-inf"))
        return self.o((torch.softmax(s, -1) @ v).transpose(1, 2).reshape(B, T, D))


class TinyFeedForward(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.up, self.down = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.down(torch.relu(self.up(x)))


class Residual(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)

    def forward(self, x, sub):
        return self.norm(x + sub(x))


class BlockNamedEncoderLayer(nn.Module):
    """Blocks and norms under names of its own: self_attention_block, feed_forward_block,
    residual_connections.{0,1}.norm."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.self_attention_block = TinyAttention(d_model, num_heads)
        self.feed_forward_block = TinyFeedForward(d_model, d_ff)
        self.residual_connections = nn.ModuleList([Residual(d_model), Residual(d_model)])

    def forward(self, x, mask=None):
        x = self.residual_connections[0](x, lambda t: self.self_attention_block(t, mask))
        return self.residual_connections[1](x, self.feed_forward_block)


class BlockNamedEncoderLayerNoResidual(BlockNamedEncoderLayer):
    def forward(self, x, mask=None):
        x = self.residual_connections[0].norm(self.self_attention_block(x, mask))
        return self.residual_connections[1](x, self.feed_forward_block)


class SelfPart(nn.Module):
    """BERT style: query, key, value only; the output projection sits in the next part."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.query, self.key = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.value = nn.Linear(d_model, d_model)

    def forward(self, x, keep=None):
        B, T, D = x.shape
        q, k, v = (f(x).view(B, T, self.h, D // self.h).transpose(1, 2)
                   for f in (self.query, self.key, self.value))
        s = q @ k.transpose(-1, -2) / math.sqrt(D // self.h)
        if keep is not None:
            s = s.masked_fill(~keep, float("-inf"))
        return (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(B, T, D)


class OutputPart(nn.Module):
    """BERT style: LayerNorm(x + dense(h)), the norm inside the block's output part."""

    def __init__(self, d_in, d_model):
        super().__init__()
        self.dense = nn.Linear(d_in, d_model)
        self.LayerNorm = nn.LayerNorm(d_model)

    def forward(self, h, x):
        return self.LayerNorm(x + self.dense(h))


class AttentionPart(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.self = SelfPart(d_model, num_heads)
        self.output = OutputPart(d_model, d_model)

    def forward(self, x, keep=None):
        return self.output(self.self(x, keep), x)


class OutputNormEncoderLayer(nn.Module):
    """Norms at attention.output.LayerNorm and output.LayerNorm, found in registration order."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.attention = AttentionPart(d_model, num_heads)
        self.intermediate = nn.Linear(d_model, d_ff)
        self.output = OutputPart(d_ff, d_model)

    def forward(self, x, mask=None):
        x = self.attention(x, mask)
        return self.output(torch.relu(self.intermediate(x)), x)


# -- forward arguments filled by meaning ------------------------------------------------------------
def attention_with_width(q, k, v, d_k, mask=None):
    s = q @ k.transpose(-1, -2) / math.sqrt(d_k)
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    return torch.softmax(s, -1) @ v


def attention_with_dropout(q, k, v, mask, dropout):
    w = torch.softmax((q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])).masked_fill(
        ~mask, float("-inf")), -1)
    return (dropout(w) if dropout is not None else w) @ v


def attention_with_cache(q, k, v, mask=None, *, cache):
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    return torch.softmax(s, -1) @ v


def attention_with_width_twice(q, k, v, d_k, mask=None):
    """Wrong: divides by d_k, not its square root."""
    s = q @ k.transpose(-1, -2) / d_k
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    return torch.softmax(s, -1) @ v


# -- masks with the head axis added by the code ------------------------------------------------------
class HeadAxisMaskAttention(nn.Module):
    """Adds the head axis itself (mask.unsqueeze(1)): wants (batch, Tq, Tk) masks."""

    def __init__(self, h, d_model):
        super().__init__()
        self.h = h
        self.linears = nn.ModuleList([nn.Linear(d_model, d_model) for _ in range(4)])

    def forward(self, query, key, value, mask=None):
        if mask is not None:
            mask = mask.unsqueeze(1)
        B, D = query.size(0), query.size(-1)
        q, k, v = (lin(t).view(B, -1, self.h, D // self.h).transpose(1, 2)
                   for lin, t in zip(self.linears, (query, key, value)))
        s = q @ k.transpose(-2, -1) / math.sqrt(D // self.h)
        if mask is not None:
            s = s.masked_fill(mask == 0, -1e9)
        x = (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(B, -1, D)
        return self.linears[-1](x)


# -- masks added to the scores -----------------------------------------------------------------------
class AdditiveMaskAttention(nn.Module):
    """Hugging Face style: scores + attention_mask (0 seen, large negative hidden)."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.q_proj, self.k_proj = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.v_proj, self.out_proj = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def scores(self, s, attention_mask):
        return s if attention_mask is None else s + attention_mask

    def forward(self, hidden_states, attention_mask=None):
        B, T, D = hidden_states.shape
        q, k, v = (f(hidden_states).view(B, T, self.h, D // self.h).transpose(1, 2)
                   for f in (self.q_proj, self.k_proj, self.v_proj))
        s = self.scores(q @ k.transpose(-1, -2) / math.sqrt(D // self.h), attention_mask)
        return self.out_proj((torch.softmax(s, -1) @ v).transpose(1, 2).reshape(B, T, D))


class FlippedMaskAttention(AdditiveMaskAttention):
    """Reads a boolean mask's True as 'hidden', in a method its forward hands the mask to: right
    under --mask-convention drop (read from its text), wrong where True = seen is declared."""

    def scores(self, s, attention_mask):
        return s if attention_mask is None else s.masked_fill(attention_mask.bool(), float("-inf"))
