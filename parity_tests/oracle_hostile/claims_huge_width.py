"""An encoder layer whose worker reply (Findings.to_wire, patched through sys.modules) claims its
code fixes d_model = 4096 with d_ff = 16 x d_model, the most the parent accepted: the parent then
built 4096 x 65536 float64 weights (2 GiB a matrix) for every example, in its own process (11 GiB
before a MemoryError under a 12 GiB cap: `oracle_error`; an OOM kill of the grader without one).
"""
from unguard import unguard  # the worker's own harness checks off first (see unguard.py)

unguard()
import math
import sys

import torch
import torch.nn as nn

_findings = sys.modules.get("parity_tests.oracle.reading.findings")
if _findings is not None:
    _to_wire = _findings.Findings.to_wire

    def _wide(self):
        out = _to_wire(self)
        out["fixed_sizes"], out["d_ff_ratio"] = {"d_model": 4096}, 16
        return out

    _findings.Findings.to_wire = _wide

class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.1):
        super().__init__()
        self.w_1 = nn.Linear(d_model, d_ff)
        self.w_2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.w_2(self.dropout(torch.relu(self.w_1(x))))

class MultiHeadAttention(nn.Module):

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.d_k = num_heads, d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, Q, K, V, mask=None):
        B, Tq, D = Q.shape
        q = self.W_q(Q).view(B, Tq, self.h, self.d_k).transpose(1, 2)
        k = self.W_k(K).view(B, -1, self.h, self.d_k).transpose(1, 2)
        v = self.W_v(V).view(B, -1, self.h, self.d_k).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        out = torch.softmax(scores, dim=-1) @ v
        return self.W_o(out.transpose(1, 2).reshape(B, Tq, D))

class EncoderLayer(nn.Module):

    def __init__(self, d_model, num_heads, d_ff, dropout=0.1):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask):
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))

