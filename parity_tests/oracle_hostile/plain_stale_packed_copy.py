"""Hostile: a plain class (no nn.Module) holding its projections as nn.Parameters W_q, W_k, W_v,
W_o and packing the first three ONCE, at construction, into W_qkv = torch.cat(...): a non-leaf copy
its forward computes with. Gradients flow back to W_q, W_k, W_v, but an optimizer step writes them
and never the copy, so the layer's query, key and value projections never learn."""
import math
import torch


class PlainAttentionStalePackedCopy:
    def __init__(self, d_model, num_heads):
        self.h, self.d = num_heads, d_model
        self.W_q = torch.nn.Parameter(torch.randn(d_model, d_model) * 0.1)
        self.W_k = torch.nn.Parameter(torch.randn(d_model, d_model) * 0.1)
        self.W_v = torch.nn.Parameter(torch.randn(d_model, d_model) * 0.1)
        self.W_o = torch.nn.Parameter(torch.randn(d_model, d_model) * 0.1)
        self.W_qkv = torch.cat([self.W_q, self.W_k, self.W_v], 1)   # stale copy after any update

    def forward(self, x, mask=None):
        B, T, D = x.shape
        q, k, v = (x @ self.W_qkv).split(D, -1)
        sh = lambda t: t.view(B, T, self.h, D // self.h).transpose(1, 2)
        q, k, v = sh(q), sh(k), sh(v)
        s = q @ k.transpose(-2, -1) / math.sqrt(D // self.h)
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        o = torch.softmax(s, -1) @ v
        return o.transpose(1, 2).reshape(B, T, D) @ self.W_o
