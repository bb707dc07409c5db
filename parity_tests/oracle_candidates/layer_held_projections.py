"""Layers that hold an attention's q, k and v projections themselves and hand the projected q, k, v
to an attention module that holds only the output projection (a translation tutorial's layout:
`self.attention(self.Wq(x), self.Wk(x), self.Wv(x), mask)`). Post-norm, the paper's. Correct
unless the docstring says BUG."""
import math

import torch
from torch import nn


class OutputOnlyAttention(nn.Module):
    """Scaled dot-product attention over heads of already projected q, k, v, then fc_out."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.dk = num_heads, d_model // num_heads
        self.fc_out = nn.Linear(d_model, d_model)

    def forward(self, q, k, v, mask=None):
        B, Tq, D = q.shape                                        # (B, Tq, D)

        def heads(t):                                             # (B, T, D) -> (B, h, T, dk)
            return t.view(B, t.shape[1], self.h, self.dk).transpose(1, 2)

        scores = heads(q) @ heads(k).transpose(-2, -1) / math.sqrt(self.dk)   # (B, h, Tq, Tk)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        out = torch.softmax(scores, dim=-1) @ heads(v)            # (B, h, Tq, dk)
        return self.fc_out(out.transpose(1, 2).reshape(B, Tq, D))


class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.w_1, self.w_2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.w_2(torch.relu(self.w_1(x)))


class HeldProjectionEncoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.1):
        super().__init__()
        self.Wq, self.Wk, self.Wv = (nn.Linear(d_model, d_model) for _ in range(3))
        self.attention = OutputOnlyAttention(d_model, num_heads)
        self.norm_1 = nn.LayerNorm(d_model)
        self.ff = FeedForward(d_model, d_ff)
        self.norm_2 = nn.LayerNorm(d_model)
        self.drop = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        a = self.attention(self.Wq(x), self.Wk(x), self.Wv(x), mask)
        x = self.norm_1(x + self.drop(a))
        return self.norm_2(x + self.drop(self.ff(x)))


class HeldProjectionEncoderLayerBUG(HeldProjectionEncoderLayer):
    """BUG: the values are projected with the key projection."""

    def forward(self, x, mask=None):
        a = self.attention(self.Wq(x), self.Wk(x), self.Wk(x), mask)
        x = self.norm_1(x + self.drop(a))
        return self.norm_2(x + self.drop(self.ff(x)))


class HeldProjectionDecoderLayer(nn.Module):
    """Self-attention projections numbered 1, cross-attention projections numbered 2."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.1):
        super().__init__()
        self.Wq_1, self.Wk_1, self.Wv_1 = (nn.Linear(d_model, d_model) for _ in range(3))
        self.attention_1 = OutputOnlyAttention(d_model, num_heads)
        self.norm_1 = nn.LayerNorm(d_model)
        self.Wq_2, self.Wk_2, self.Wv_2 = (nn.Linear(d_model, d_model) for _ in range(3))
        self.attention_2 = OutputOnlyAttention(d_model, num_heads)
        self.norm_2 = nn.LayerNorm(d_model)
        self.ff = FeedForward(d_model, d_ff)
        self.norm_3 = nn.LayerNorm(d_model)
        self.drop = nn.Dropout(dropout)

    def forward(self, x, memory, self_mask=None, memory_mask=None):
        a = self.attention_1(self.Wq_1(x), self.Wk_1(x), self.Wv_1(x), self_mask)
        x = self.norm_1(x + self.drop(a))
        c = self.attention_2(self.Wq_2(x), self.Wk_2(memory), self.Wv_2(memory), memory_mask)
        x = self.norm_2(x + self.drop(c))
        return self.norm_3(x + self.drop(self.ff(x)))


class HeldProjectionDecoderLayerBUG(HeldProjectionDecoderLayer):
    """BUG: both attentions end in the cross-attention module's output projection."""

    def forward(self, x, memory, self_mask=None, memory_mask=None):
        a = self.attention_2(self.Wq_1(x), self.Wk_1(x), self.Wv_1(x), self_mask)
        x = self.norm_1(x + self.drop(a))
        c = self.attention_2(self.Wq_2(x), self.Wk_2(memory), self.Wv_2(memory), memory_mask)
        x = self.norm_2(x + self.drop(c))
        return self.norm_3(x + self.drop(self.ff(x)))
