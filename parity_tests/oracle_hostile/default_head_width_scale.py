"""Multi-head attention taking an optional head width `d_k=64` beside the head count that sizes
nothing: the heads are split by the head count, and `d_k` is used only in the scale 1/sqrt(d_k).
Right when d_model // num_heads is 64 (512 and 8), wrong for a call giving only the assignment's
sizes anywhere else. The oracle derives the head width for a numeric default like this one (a
class sized by it, `DefaultWidthAttention` in oracle_candidates/default_head_widths.py, needs it),
so every build was handed the right d_k. Torch and NumPy (forward only) alike."""
import math

import numpy as np
from torch import nn


class ScaleByDefaultWidth(nn.Module):
    def __init__(self, d_model, num_heads, d_k=64):
        super().__init__()
        self.h, self.d_k = num_heads, d_k
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def _split(self, t):                          # (B, T, D) -> (B, H, T, D / H)
        B, T, D = t.shape
        return t.view(B, T, self.h, D // self.h).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        q, k, v = self._split(self.q_proj(query)), self._split(self.k_proj(key)), self._split(self.v_proj(value))
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        out = scores.softmax(-1) @ v              # (B, H, Tq, D / H)
        B, H, T, w = out.shape
        return self.out_proj(out.transpose(1, 2).reshape(B, T, H * w))


class NumpyScaleByDefaultWidth:
    def __init__(self, d_model, h, d_k=64):
        self.h, self.d_k = h, d_k
        self.W_q, self.W_k, self.W_v, self.W_o = (np.zeros((d_model, d_model)) for _ in range(4))

    def _split(self, t):                          # (B, T, D) -> (B, H, T, D / H)
        B, T, D = t.shape
        return t.reshape(B, T, self.h, D // self.h).transpose(0, 2, 1, 3)

    def forward(self, query, key, value, mask=None):
        q, k, v = self._split(query @ self.W_q), self._split(key @ self.W_k), self._split(value @ self.W_v)
        scores = q @ k.swapaxes(-1, -2) / np.sqrt(self.d_k)
        if mask is not None:
            scores = np.where(mask, scores, -1e30)
        w = np.exp(scores - scores.max(-1, keepdims=True))
        out = (w / w.sum(-1, keepdims=True)) @ v
        B, H, T, d = out.shape
        return out.transpose(0, 2, 1, 3).reshape(B, T, H * d) @ self.W_o
