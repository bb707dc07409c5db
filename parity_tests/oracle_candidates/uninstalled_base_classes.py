"""Torch attention and a training wrapper in one file, the wrapper deriving from a class of a
package the grader does not have (the style of a training script: a `LightningModule`-like base
beside the model). The package name is made up so that it is never installed. Correct unless a
docstring says BUG."""
import math

import absent_training_loops as loops
import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads, self.d_k = n_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def heads(self, t):
        B, T, _ = t.shape
        return t.view(B, T, self.n_heads, self.d_k).transpose(1, 2)

    def scores(self, x):
        return self.heads(self.W_q(x)) @ self.heads(self.W_k(x)).transpose(-2, -1) / math.sqrt(self.d_k)

    def forward(self, x, mask=None):
        s = self.scores(x)
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        out = torch.softmax(s, dim=-1) @ self.heads(self.W_v(x))
        B, _, T, _ = out.shape
        return self.W_o(out.transpose(1, 2).reshape(B, T, -1))


class SelfAttention_BUG(SelfAttention):
    """BUG: the scores are divided by d_k instead of its square root."""

    def scores(self, x):
        return self.heads(self.W_q(x)) @ self.heads(self.W_k(x)).transpose(-2, -1) / self.d_k


class TrainingWrapper(loops.TrainableModule):
    """Derives from the missing package's class: cannot be built where it is absent."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        self.inner = SelfAttention(d_model, n_heads)

    def forward(self, x, mask=None):
        return self.inner(x, mask)
