"""Sizes named as BERT's paper names them: H the hidden width, A the number of attention heads
(`MultiHeadAttention(H, A)`, `EncoderLayer(H, A, d_ff)`). A lone `h` elsewhere is the head count
(the Annotated Transformer's `MultiHeadedAttention(h, d_model)`); here the constructor's own
`H // A` says which is which. Twins whose docstring says BUG have one planted mistake."""
from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class LetterAttention(nn.Module):
    def __init__(self, H, A, P_drop=0.1):
        super().__init__()
        self.A = A
        self.d_k = H // A
        self.W_Q = nn.Linear(H, H)
        self.W_K = nn.Linear(H, H)
        self.W_V = nn.Linear(H, H)
        self.W_O = nn.Linear(H, H)
        self.drop = nn.Dropout(P_drop)

    def heads(self, t):
        B, S, _ = t.shape
        return t.view(B, S, self.A, self.d_k).transpose(1, 2)

    def scores(self, q, k):
        return q @ k.transpose(-2, -1) / math.sqrt(self.d_k)

    def forward(self, x, mask=None):
        B, S, H = x.shape
        q, k, v = self.heads(self.W_Q(x)), self.heads(self.W_K(x)), self.heads(self.W_V(x))
        s = self.scores(q, k)
        if mask is not None:
            s = s.masked_fill(mask == 0, -1e9)
        ctx = self.drop(F.softmax(s, dim=-1)) @ v
        return self.W_O(ctx.transpose(1, 2).contiguous().view(B, S, H))


class LetterAttentionBUG(LetterAttention):
    """BUG: the softmax runs over the query axis."""

    def forward(self, x, mask=None):
        B, S, H = x.shape
        q, k, v = self.heads(self.W_Q(x)), self.heads(self.W_K(x)), self.heads(self.W_V(x))
        s = self.scores(q, k)
        if mask is not None:
            s = s.masked_fill(mask == 0, -1e9)
        ctx = F.softmax(s, dim=-2) @ v
        return self.W_O(ctx.transpose(1, 2).contiguous().view(B, S, H))


class LetterEncoderLayer(nn.Module):
    """Post-norm, ReLU: the sizes reach the attention as (H, A), divided there."""

    def __init__(self, H, A, d_ff, P_drop=0.1):
        super().__init__()
        self.attention = LetterAttention(H, A, P_drop)
        self.attn_norm = nn.LayerNorm(H)
        self.fc1 = nn.Linear(H, d_ff)
        self.fc2 = nn.Linear(d_ff, H)
        self.ffn_norm = nn.LayerNorm(H)

    def forward(self, x, mask=None):
        x = self.attn_norm(x + self.attention(x, mask))
        return self.ffn_norm(x + self.fc2(F.relu(self.fc1(x))))


class LetterEncoderLayerBUG(LetterEncoderLayer):
    """BUG: the attention's residual is left out."""

    def forward(self, x, mask=None):
        x = self.attn_norm(self.attention(x, mask))
        return self.ffn_norm(x + self.fc2(F.relu(self.fc1(x))))
