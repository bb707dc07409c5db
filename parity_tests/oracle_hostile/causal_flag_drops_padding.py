"""A self-attention whose constructor's `causal` flag defaults to True and that, built causal,
replaces any mask it is given by the causal one: a padded batch attends its padding (test data for
parity_tests/test_oracle_constructor_flags.py). The causal run called it with no mask, so it
matched."""
import math

import torch
import torch.nn as nn


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, causal=True):
        super().__init__()
        self.h, self.causal = num_heads, causal
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d_model, d_model)
                                                                for _ in range(4))

    def forward(self, x, mask=None):                # mask: (B, 1, T, T) bool, True = keep
        B, T, D = x.shape
        q, k, v = (p(x).view(B, T, self.h, D // self.h).transpose(1, 2)
                   for p in (self.q_proj, self.k_proj, self.v_proj))
        s = q @ k.transpose(-1, -2) / math.sqrt(D // self.h)
        if self.causal:
            mask = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        return self.out_proj((s.softmax(-1) @ v).transpose(1, 2).reshape(B, T, D))
