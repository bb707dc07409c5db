"""Attention with one packed q|k|v projection whose rows are read in an order other than the plain
q | k | v thirds: width first (row d * 3H + part * H + head, what einops' `'b t (d k h) -> k b h t
d'` reads), and head-grouped rows in an attention whose forward requires its mask and adds the head
axis to it itself (`mask.unsqueeze(1)`). Our own code in those styles; the wrong twins say BUG."""
from __future__ import annotations

import math

import torch
from torch import nn


class WidthFirstPackedAttention(nn.Module):
    """Self-attention; the packed rows are (width, part, head), the mask True where a key may be
    attended."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.dk = num_heads, d_model // num_heads
        self.to_qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def _parts(self, x):
        B, T, _ = x.shape
        # (B, T, 3D) -> (B, T, dk, 3, H) -> (3, B, H, T, dk)
        return self.to_qkv(x).reshape(B, T, self.dk, 3, self.h).permute(3, 0, 4, 1, 2)

    def _attend(self, q, k, v, mask):
        s = q @ k.transpose(-1, -2) / math.sqrt(self.dk)            # (B, H, T, T)
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        y = torch.softmax(s, dim=-1) @ v                              # (B, H, T, dk)
        return self.proj(y.transpose(1, 2).reshape(y.shape[0], y.shape[2], -1))

    def forward(self, x, mask=None):
        q, k, v = self._parts(x)
        return self._attend(q, k, v, mask)


class WidthFirstPackedAttentionBUG(WidthFirstPackedAttention):
    """BUG: the key and value parts swapped when the packed rows are split."""

    def forward(self, x, mask=None):
        q, v, k = self._parts(x)
        return self._attend(q, k, v, mask)


class WidthFirstEncoderLayer(nn.Module):
    """Post-norm encoder layer around that attention."""

    attention = WidthFirstPackedAttention

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.attn = self.attention(d_model, num_heads)
        self.ff1, self.ff2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)

    def forward(self, x, mask=None):
        x = self.ln1(x + self.attn(x, mask))
        return self.ln2(x + self.ff2(torch.relu(self.ff1(x))))


class WidthFirstEncoderLayerBUG(WidthFirstEncoderLayer):
    """BUG: its attention reads the packed rows with key and value swapped."""

    attention = WidthFirstPackedAttentionBUG


class MaskRequiredGroupedAttention(nn.Module):
    """Self-attention `forward(x, mask)` with no default for the mask, taken (batch, Tq, Tk) and
    given its head axis here; the packed rows grouped by head ([q | k | v] of each head)."""

    def __init__(self, num_heads, d_model):
        super().__init__()
        self.h, self.dk = num_heads, d_model // num_heads
        self.qkv_linear = nn.Linear(d_model, 3 * d_model)
        self.linear = nn.Linear(d_model, d_model)

    def scale(self):
        return math.sqrt(self.dk)

    def forward(self, x, mask):
        B, T, _ = x.shape
        qkv = self.qkv_linear(x).reshape(B, T, self.h, 3 * self.dk).permute(0, 2, 1, 3)
        q, k, v = qkv.chunk(3, dim=-1)                                # each (B, H, T, dk)
        s = (q @ k.transpose(-2, -1)) / self.scale()
        s = s.masked_fill(mask.unsqueeze(1) == 0, -1e20)
        y = torch.softmax(s, dim=-1) @ v
        return self.linear(y.permute(0, 2, 1, 3).reshape(B, T, self.h * self.dk))


class MaskRequiredGroupedAttentionBUG(MaskRequiredGroupedAttention):
    """BUG: the scores divided by d_model instead of sqrt(d_k)."""

    def scale(self):
        return float(self.h * self.dk)
