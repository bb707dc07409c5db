"""Layers sized by globals that only the file's `if __name__ == "__main__":` block sets, as the
widely copied nlp-tutorial Transformer writes them: constructors without arguments, `nn.Linear(
d_model, d_k * n_heads)`, a scaled dot-product module built inline (`Attention()(q, k, v, mask)`)
dividing by the global `d_k`, masks (batch, Tq, Tk) True where a key is hidden, given their head
axis by `mask.unsqueeze(1).repeat(1, n_heads, 1, 1)`. Our own code in that style; the wrong twins
say BUG."""
from __future__ import annotations

import numpy as np
import torch
from torch import nn


class ScaledDotAttention(nn.Module):
    def forward(self, Q, K, V, attn_mask):
        scores = Q @ K.transpose(-1, -2) / np.sqrt(d_k)              # (B, H, Tq, Tk)
        scores = scores.masked_fill(attn_mask, -1e9)
        attn = torch.softmax(scores, dim=-1)
        return attn @ V, attn


class ScaledDotAttentionBUG(nn.Module):
    """BUG: the scores divided by d_k, not its square root."""

    def forward(self, Q, K, V, attn_mask):
        scores = Q @ K.transpose(-1, -2) / d_k
        scores = scores.masked_fill(attn_mask, -1e9)
        return torch.softmax(scores, dim=-1) @ V


class GlobalSizedAttention(nn.Module):
    """Multi-head attention returning its sublayer's LayerNorm(out + query), as the tutorial does."""

    def __init__(self):
        super().__init__()
        self.W_Q, self.W_K = nn.Linear(d_model, d_k * n_heads), nn.Linear(d_model, d_k * n_heads)
        self.W_V, self.linear = nn.Linear(d_model, d_v * n_heads), nn.Linear(n_heads * d_v, d_model)
        self.layer_norm = nn.LayerNorm(d_model)

    def forward(self, Q, K, V, attn_mask):
        B = Q.size(0)
        q = self.W_Q(Q).view(B, -1, n_heads, d_k).transpose(1, 2)     # (B, H, Tq, d_k)
        k = self.W_K(K).view(B, -1, n_heads, d_k).transpose(1, 2)
        v = self.W_V(V).view(B, -1, n_heads, d_v).transpose(1, 2)
        attn_mask = attn_mask.unsqueeze(1).repeat(1, n_heads, 1, 1)    # (B, H, Tq, Tk)
        context, attn = ScaledDotAttention()(q, k, v, attn_mask)
        context = context.transpose(1, 2).contiguous().view(B, -1, n_heads * d_v)
        return self.layer_norm(self.linear(context) + Q), attn


class GlobalSizedFeedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
        self.layer_norm = nn.LayerNorm(d_model)

    def forward(self, x):
        return self.layer_norm(self.fc2(torch.relu(self.fc1(x))) + x)


class GlobalSizedEncoderLayer(nn.Module):
    """Post-norm: each block adds its input and normalises itself."""

    def __init__(self):
        super().__init__()
        self.enc_self_attn = GlobalSizedAttention()
        self.pos_ffn = GlobalSizedFeedForward()

    def forward(self, enc_inputs, enc_self_attn_mask):
        out, attn = self.enc_self_attn(enc_inputs, enc_inputs, enc_inputs, enc_self_attn_mask)
        return self.pos_ffn(out), attn


class GlobalSizedFeedForwardBUG(GlobalSizedFeedForward):
    def forward(self, x):
        return self.layer_norm(self.fc2(torch.relu(self.fc1(x))))


class GlobalSizedEncoderLayerBUG(GlobalSizedEncoderLayer):
    """BUG: the feed-forward block leaves out its residual."""

    def __init__(self):
        super().__init__()
        self.pos_ffn = GlobalSizedFeedForwardBUG()


if __name__ == "__main__":
    d_model = 512
    d_ff = 2048
    d_k = d_v = 64
    n_heads = 8
    layer = GlobalSizedEncoderLayer()
    x = torch.randn(2, 5, d_model)
    print(layer(x, torch.zeros(2, 5, 5, dtype=torch.bool))[0].shape)
