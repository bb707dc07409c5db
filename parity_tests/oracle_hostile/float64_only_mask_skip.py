"""BUG: the same float32-softmax attention as oracle_candidates/float32_softmax_masks.py, but the mask
is applied only when the inputs are not float64. The simplest float64 failure (no mask) differs by
float32 rounding alone, and the float32 re-check matches; every masked float64 example is wrong."""
import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.dk = num_heads, d_model // num_heads
        self.query, self.key = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.value, self.dense = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, q, k, v, attention_mask=None):
        B = q.shape[0]

        def split(t):
            return t.view(B, -1, self.h, self.dk).permute(0, 2, 1, 3)           # (B, H, T, dk)
        s = split(self.query(q)) @ split(self.key(k)).transpose(-1, -2) * self.dk ** -0.5
        if attention_mask is not None and q.dtype != torch.float64:         # BUG: never in float64
            s = s.masked_fill(attention_mask == 0, float("-inf"))
        p = torch.softmax(s, dim=-1, dtype=torch.float32).to(s.dtype)           # float32 softmax
        out = (p @ split(self.value(v))).permute(0, 2, 1, 3).reshape(B, -1, self.h * self.dk)
        return self.dense(out)
