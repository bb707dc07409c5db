"""A layer whose norm placement follows its weights: pre-norm while every norm gain is 0 (the
weights the oracle's norm-order probe writes, recognise/norm_order), post-norm otherwise. The probe
decides "pre-norm"; every scored example is post-norm, so the check fails. The mismatch's hint used
to say "post-norm instead of pre-norm (--set norm_first=false)", against what the probe had just
decided and reported; a hint may not contradict the probe."""
import math

import torch
import torch.nn as nn


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


class EncoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads)
        self.w_1, self.w_2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)

    def forward(self, x, mask=None):
        if not (self.norm1.weight.any() or self.norm2.weight.any()):      # the probe's weights
            h = self.norm1(x)
            x = x + self.self_attn(h, h, h, mask)
            return x + self.w_2(torch.relu(self.w_1(self.norm2(x))))
        x = self.norm1(x + self.self_attn(x, x, x, mask))
        return self.norm2(x + self.w_2(torch.relu(self.w_1(x))))
