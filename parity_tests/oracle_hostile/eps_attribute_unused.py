"""An epsilon that lies: the LayerNorms keep `self.eps` (1e-5, what the assignment asks for, and
what the oracle reads as the candidate's own epsilon) but their arithmetic adds 1e-12. Rows of
large spread hide the difference (1e-5 / (2 var) of the output: float32 rounding size when the
variance is above about 2.5); rows of small spread show it."""
import math

import torch
import torch.nn as nn


class LayerNorm(nn.Module):
    used = 1e-12                            # the epsilon the arithmetic adds

    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))
        self.eps = eps                      # declared, never used below

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = x.var(-1, unbiased=False, keepdim=True)
        return self.weight * (x - mean) / torch.sqrt(var + self.used) + self.bias


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.d_k = num_heads, d_model // num_heads
        self.W_q, self.W_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.W_v, self.W_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, Q, K, V, mask=None):
        B, Tq, D = Q.shape
        q = self.W_q(Q).view(B, Tq, self.h, self.d_k).transpose(1, 2)
        k = self.W_k(K).view(B, -1, self.h, self.d_k).transpose(1, 2)
        v = self.W_v(V).view(B, -1, self.h, self.d_k).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        return self.W_o((torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(B, Tq, D))


class LayerNormNearby(LayerNorm):
    used = 9e-6                             # 1e-5 wanted: 1e-6 / (2 var) of the output


class EncoderLayer(nn.Module):
    norm = LayerNorm
    def __init__(self, d_model, num_heads, d_ff, eps=1e-5):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads)
        self.w_1, self.w_2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
        self.norm1, self.norm2 = self.norm(d_model, eps), self.norm(d_model, eps)

    def forward(self, x, mask=None):
        x = self.norm1(x + self.self_attn(x, x, x, mask))
        return self.norm2(x + self.w_2(torch.relu(self.w_1(x))))


class EncoderLayerNearbyEps(EncoderLayer):
    """The same lie with an epsilon near the declared one: float32-sized on most draws."""
    norm = LayerNormNearby
