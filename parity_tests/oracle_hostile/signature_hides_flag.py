"""A forward whose claimed signature hides an argument: `functools.wraps` of a narrower function
makes `inspect.signature` report (Q, K, V, mask=None) while the code also takes `causal=False`,
which it ignores. Right at the default the oracle leaves it at; wrong wherever causal=True is meant.
The report must name the hidden argument, read from the code rather than the claim."""
import functools
import math

import torch
import torch.nn as nn


def _claimed(self, Q, K, V, mask=None):
    """The signature shown to `inspect`."""


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.d_k = num_heads, d_model // num_heads
        self.W_q, self.W_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.W_v, self.W_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    @functools.wraps(_claimed)
    def forward(self, Q, K, V, mask=None, causal=False):
        B, Tq, D = Q.shape
        q = self.W_q(Q).view(B, Tq, self.h, self.d_k).transpose(1, 2)
        k = self.W_k(K).view(B, -1, self.h, self.d_k).transpose(1, 2)
        v = self.W_v(V).view(B, -1, self.h, self.d_k).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        return self.W_o((torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(B, Tq, D))
