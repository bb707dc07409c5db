"""Torch modules whose parameters are named in the plural or by role with a suffix: a layer norm
holding `weights` / `biases`, an attention holding `query_weights` ... `final_linear_weights` kept
(in, out) for `x @ W`, with `query_bias` ... `final_linear_bias`. The right classes have planted-bug
twins (BUG): a norm that subtracts its shift, an attention that adds the key's bias to the values."""
import math

import torch
from torch import nn


class PluralLayerNorm(nn.Module):
    def __init__(self, trailing_dim: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weights = nn.Parameter(torch.ones(trailing_dim))
        self.biases = nn.Parameter(torch.zeros(trailing_dim))

    def shift(self, y):
        return y + self.biases

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
        return self.shift((x - mean) / torch.sqrt(var + self.eps) * self.weights)


class PluralLayerNormBUG(PluralLayerNorm):
    def shift(self, y):
        return y - self.biases


class RoleNamedAttention(nn.Module):
    def __init__(self, embedding_dim: int, num_of_heads: int):
        super().__init__()
        self.num_of_heads, self.head_dim = num_of_heads, embedding_dim // num_of_heads
        scale = 1 / math.sqrt(embedding_dim)
        self.query_weights = nn.Parameter(torch.randn(embedding_dim, embedding_dim) * scale)
        self.key_weights = nn.Parameter(torch.randn(embedding_dim, embedding_dim) * scale)
        self.value_weights = nn.Parameter(torch.randn(embedding_dim, embedding_dim) * scale)
        self.final_linear_weights = nn.Parameter(torch.randn(embedding_dim, embedding_dim) * scale)
        self.query_bias = nn.Parameter(torch.zeros(embedding_dim))
        self.key_bias = nn.Parameter(torch.zeros(embedding_dim))
        self.value_bias = nn.Parameter(torch.zeros(embedding_dim))
        self.final_linear_bias = nn.Parameter(torch.zeros(embedding_dim))

    def heads(self, t):
        return t.view(t.shape[0], t.shape[1], self.num_of_heads, self.head_dim).transpose(1, 2)

    def values(self, value):
        return value @ self.value_weights + self.value_bias

    def forward(self, query, key, value, mask=None):
        q = self.heads(query @ self.query_weights + self.query_bias)
        k = self.heads(key @ self.key_weights + self.key_bias)
        v = self.heads(self.values(value))
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        out = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2)
        out = out.reshape(query.shape[0], query.shape[1], -1)
        return out @ self.final_linear_weights + self.final_linear_bias


class RoleNamedAttentionBUG(RoleNamedAttention):
    def values(self, value):
        return value @ self.value_weights + self.key_bias
