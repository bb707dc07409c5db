"""Candidates whose model width is a module-level global (`n_embd`), as in lecture code that keeps
its hyperparameters at the top of the file. Correct unless the docstring says BUG.
"""
import math

import torch
import torch.nn as nn

n_embd = 24


class GlobalWidthAttention(nn.Module):
    """Self-attention with num_heads heads of head_size; the projections sized by n_embd."""

    def __init__(self, num_heads, head_size):
        super().__init__()
        self.h, self.hs = num_heads, head_size
        self.query = nn.Linear(n_embd, num_heads * head_size)
        self.key = nn.Linear(n_embd, num_heads * head_size)
        self.value = nn.Linear(n_embd, num_heads * head_size)
        self.proj = nn.Linear(num_heads * head_size, n_embd)

    def weights(self, scores):
        return torch.softmax(scores, dim=-1)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = (f(x).view(b, t, self.h, self.hs).transpose(1, 2)
                   for f in (self.query, self.key, self.value))
        w = self.weights(q @ k.transpose(-2, -1) / math.sqrt(self.hs))
        return self.proj((w @ v).transpose(1, 2).reshape(b, t, -1))


class GlobalWidthAttentionWrongAxis(GlobalWidthAttention):
    """BUG: softmax over the query axis."""

    def weights(self, scores):
        return torch.softmax(scores, dim=-2)


class GlobalWidthFeedForward(nn.Module):
    """Feed-forward taking no size at all: n_embd -> d_hidden -> n_embd."""

    def __init__(self, d_hidden):
        super().__init__()
        self.up = nn.Linear(n_embd, d_hidden)
        self.down = nn.Linear(d_hidden, n_embd)

    def forward(self, x):
        return self.down(torch.relu(self.up(x)))


block_size = 32


class GlobalWidthCausalAttention(GlobalWidthAttention):
    """The same attention masking the future itself, with a triangle sized by the global
    block_size (no mask argument)."""

    def __init__(self, num_heads, head_size):
        super().__init__(num_heads, head_size)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))

    def weights(self, scores):
        t = scores.shape[-1]
        return torch.softmax(scores.masked_fill(self.tril[:t, :t] == 0, float("-inf")), dim=-1)
