"""Torch candidates whose constructors the oracle must work out.

Each is correct unless its docstring says BUG.
"""
import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


class ScaledDotProductAttention(nn.Module):
    """sdpa as a module taking a temperature (= sqrt(d_k)) and an attention dropout."""

    def __init__(self, temperature, attn_dropout=0.1):
        super().__init__()
        self.temperature = temperature
        self.dropout = nn.Dropout(attn_dropout)

    def forward(self, q, k, v, mask=None):
        attn = torch.matmul(q / self.temperature, k.transpose(-2, -1))
        if mask is not None:
            attn = attn.masked_fill(mask == 0, -1e9)
        attn = self.dropout(F.softmax(attn, dim=-1))
        return torch.matmul(attn, v), attn


class ScaledDotProductAttentionTwice(ScaledDotProductAttention):
    """BUG: divides the scores by the temperature twice."""

    def forward(self, q, k, v, mask=None):
        return super().forward(q / self.temperature, k, v, mask)


class HeadWidthMHA(nn.Module):
    """Multi-head attention that wants the head widths d_k, d_v and a device in its constructor."""

    def __init__(self, n_head, d_model, d_k, d_v, device, dropout=0.1):
        super().__init__()
        self.n_head, self.d_k, self.d_v = n_head, d_k, d_v
        self.w_qs = nn.Linear(d_model, n_head * d_k, device=device)
        self.w_ks = nn.Linear(d_model, n_head * d_k, device=device)
        self.w_vs = nn.Linear(d_model, n_head * d_v, device=device)
        self.fc = nn.Linear(n_head * d_v, d_model, device=device)
        self.attention = ScaledDotProductAttention(temperature=d_k ** 0.5, attn_dropout=dropout)

    def forward(self, q, k, v, mask=None):
        B, Tq, Tk, H = q.size(0), q.size(1), k.size(1), self.n_head
        q = self.w_qs(q).view(B, Tq, H, self.d_k).transpose(1, 2)
        k = self.w_ks(k).view(B, Tk, H, self.d_k).transpose(1, 2)
        v = self.w_vs(v).view(B, Tk, H, self.d_v).transpose(1, 2)
        out, attn = self.attention(q, k, v, mask=mask)
        out = out.transpose(1, 2).contiguous().view(B, Tq, -1)
        return self.fc(out), attn


@dataclass
class ModelArgs:
    dim: int = 512
    n_heads: int = 8
    dropout: float = 0.1


class ArgsAttention(nn.Module):
    """Self-attention taking a dataclass of arguments (LLaMA-style `args: ModelArgs`)."""

    def __init__(self, args: ModelArgs):
        super().__init__()
        self.n_heads, self.head_dim = args.n_heads, args.dim // args.n_heads
        self.wq = nn.Linear(args.dim, args.dim)
        self.wk = nn.Linear(args.dim, args.dim)
        self.wv = nn.Linear(args.dim, args.dim)
        self.wo = nn.Linear(args.dim, args.dim)
        self.drop = nn.Dropout(args.dropout)

    def forward(self, x, mask=None):
        B, T, _ = x.shape
        q, k, v = (w(x).view(B, T, self.n_heads, self.head_dim).transpose(1, 2)
                   for w in (self.wq, self.wk, self.wv))
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=None if mask is None else mask.bool())
        return self.wo(self.drop(y.transpose(1, 2).reshape(B, T, -1)))


class DictConfigFFN(nn.Module):
    """Feed-forward reading a plain dict config: cfg["emb_dim"], cfg["hidden_dim"], cfg["drop_rate"]."""

    def __init__(self, cfg):
        super().__init__()
        self.fc1 = nn.Linear(cfg["emb_dim"], cfg["hidden_dim"])
        self.fc2 = nn.Linear(cfg["hidden_dim"], cfg["emb_dim"])
        self.drop = nn.Dropout(cfg["drop_rate"])

    def forward(self, x):
        return self.drop(self.fc2(torch.relu(self.fc1(x))))


class DictConfigFFNBad(DictConfigFFN):
    """BUG: GELU where the component asks for ReLU."""

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class ScaledFFN(nn.Module):
    """A feed-forward with a REQUIRED output scale the oracle cannot name: --init-kwargs '{"alpha": 1}'."""

    def __init__(self, d_model, d_ff, alpha):
        super().__init__()
        self.w_1 = nn.Linear(d_model, d_ff)
        self.w_2 = nn.Linear(d_ff, d_model)
        self.alpha = alpha

    def forward(self, x):
        return self.alpha * self.w_2(torch.relu(self.w_1(x)))


class MultiHeadAttention(nn.Module):
    """Plain multi-head attention (used as a sub-module below)."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.d_k = num_heads, d_model // num_heads
        self.W_q, self.W_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.W_v, self.W_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, q, k, v, mask=None):
        B = q.size(0)
        q, k, v = (w(t).view(B, -1, self.h, self.d_k).transpose(1, 2)
                   for w, t in ((self.W_q, q), (self.W_k, k), (self.W_v, v)))
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            s = s.masked_fill(mask == 0, -1e9)
        y = torch.softmax(s, -1) @ v
        return self.W_o(y.transpose(1, 2).reshape(B, -1, self.h * self.d_k))


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.1):
        super().__init__()
        self.w_1, self.w_2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.w_2(self.dropout(torch.relu(self.w_1(x))))


class EncoderLayer(nn.Module):
    """Post-norm encoder layer that takes its sub-modules (Annotated-Transformer style)."""

    def __init__(self, size, self_attn: MultiHeadAttention, feed_forward: PositionwiseFeedForward,
                 dropout):
        super().__init__()
        self.self_attn, self.feed_forward = self_attn, feed_forward
        self.norm1, self.norm2 = nn.LayerNorm(size), nn.LayerNorm(size)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask):
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))


class EncoderLayerByRole(EncoderLayer):
    """The same without annotations: the sub-modules are found by their argument names."""

    def __init__(self, d_model, self_attn, feed_forward, dropout):
        super().__init__(d_model, self_attn, feed_forward, dropout)


class EncoderLayerNoResidual(EncoderLayer):
    """BUG: the feed-forward sublayer forgets its residual connection."""

    def forward(self, x, mask):
        x = self.norm1(x + self.self_attn(x, x, x, mask))
        return self.norm2(self.feed_forward(x))
