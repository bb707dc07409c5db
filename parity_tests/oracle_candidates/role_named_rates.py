"""Blocks whose constructors require dropout rates named for the block they act in
(`attention_dropout_p`, `proj_dropout_p`, `mlp_dropout_p`) and a width multiplier named for the MLP
(`mlp_ratio`), none with a default, as ViT code writes them. Our own code; the BUG twin of the
attention scales its scores by d_model instead of the head width."""
from __future__ import annotations

import torch
from torch import nn


class RatedSelfAttention(nn.Module):
    def __init__(self, dim, num_heads, attention_dropout_p, proj_dropout_p):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.attention_dropout = nn.Dropout(attention_dropout_p)
        self.proj = nn.Linear(dim, dim)
        self.proj_dropout = nn.Dropout(proj_dropout_p)

    def scale(self, D):
        return self.head_dim ** -0.5

    def forward(self, x):
        # x: (B, N, D); qkv: (3, B, H, N, Dh)
        B, N, D = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        att = self.attention_dropout(((q @ k.transpose(-2, -1)) * self.scale(D)).softmax(dim=-1))
        out = (att @ v).transpose(1, 2).reshape(B, N, D)
        return self.proj_dropout(self.proj(out))


class RatedSelfAttentionBUG(RatedSelfAttention):
    def scale(self, D):
        return D ** -0.5                # the model width, not the head width


class RatedMLP(nn.Module):
    def __init__(self, embed_dim, mlp_ratio, mlp_dropout_p):
        super().__init__()
        hidden = int(embed_dim * mlp_ratio)
        self.fc1 = nn.Linear(embed_dim, hidden)
        self.fc2 = nn.Linear(hidden, embed_dim)
        self.drop = nn.Dropout(mlp_dropout_p)

    def forward(self, x):
        return self.drop(self.fc2(self.drop(torch.relu(self.fc1(x)))))


class RatedEncoderBlock(nn.Module):
    def __init__(self, embed_dim, num_heads, mha_attention_dropout_p, mha_proj_dropout_p, mlp_ratio,
                 mlp_dropout_p):
        super().__init__()
        self.mha = RatedSelfAttention(embed_dim, num_heads, mha_attention_dropout_p, mha_proj_dropout_p)
        self.norm1 = nn.LayerNorm(embed_dim)
        self.mlp = RatedMLP(embed_dim, mlp_ratio, mlp_dropout_p)
        self.norm2 = nn.LayerNorm(embed_dim)

    def forward(self, x):
        x = self.norm1(x + self.mha(x))
        return self.norm2(x + self.mlp(x))
