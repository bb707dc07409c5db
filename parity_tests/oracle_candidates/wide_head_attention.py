"""An encoder layer whose attention gives every head the whole model width: the query, key and value
projections are (heads * d_model, d_model), the output projection (d_model, heads * d_model), the
scale 1/sqrt(d_model). Not the paper's attention (heads split d_model between them), so not
comparable; the oracle must say where the shapes part, not call the attention a gated feed-forward."""
import torch
from torch import nn


class WideHeadAttention(nn.Module):
    def __init__(self, d_model, heads):
        super().__init__()
        self.h, self.d = heads, d_model
        self.W_q = nn.Linear(d_model, heads * d_model)
        self.W_k = nn.Linear(d_model, heads * d_model)
        self.W_v = nn.Linear(d_model, heads * d_model)
        self.W_o = nn.Linear(heads * d_model, d_model)

    def forward(self, x):
        B, T, _ = x.shape
        q, k, v = (t.view(B, T, self.h, self.d).transpose(1, 2) for t in (self.W_q(x), self.W_k(x), self.W_v(x)))
        a = torch.softmax(q @ k.transpose(-2, -1) / self.d ** 0.5, dim=-1)
        return self.W_o((a @ v).transpose(1, 2).reshape(B, T, self.h * self.d))


class WideHeadEncoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.mha = WideHeadAttention(d_model, num_heads)
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.ffn = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))

    def forward(self, x):
        x = self.ln1(x + self.mha(x))
        return self.ln2(x + self.ffn(x))
