"""Post-norm PyTorch encoder layers in the GPT-file style of short names (test data for
parity_tests/test_oracle_shared_norms.py): one with a LayerNorm per sublayer (`ln_1`, `ln_2`), and a
twin holding one `ln` that both sublayers use."""
import math

import torch
import torch.nn as nn


class TwoNormBlock(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.h, self.dh = num_heads, d_model // num_heads
        self.q, self.k, self.v, self.o = (nn.Linear(d_model, d_model) for _ in range(4))
        self.fc, self.proj = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
        self.ln_1, self.ln_2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)

    def attend(self, x, mask):               # (B, T, d); mask (B, 1, T, T), True = keep
        B, T, d = x.shape
        q, k, v = (p(x).view(B, T, self.h, self.dh).transpose(1, 2) for p in (self.q, self.k, self.v))
        s = q @ k.transpose(-2, -1) / math.sqrt(self.dh)
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        return self.o((torch.softmax(s, -1) @ v).transpose(1, 2).reshape(B, T, d))

    def norms(self):
        return self.ln_1, self.ln_2

    def forward(self, x, mask=None):
        first, second = self.norms()
        x = first(x + self.attend(x, mask))
        return second(x + self.proj(torch.relu(self.fc(x))))


class SharedNormBlock(TwoNormBlock):
    """BUG: one LayerNorm for both sublayers."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__(d_model, num_heads, d_ff)
        del self.ln_1, self.ln_2
        self.ln = nn.LayerNorm(d_model)

    def norms(self):
        return self.ln, self.ln
