"""An encoder layer documented as taking (batch, seq, d_model) whose attention is
`nn.MultiheadAttention` built without `batch_first=True` (test data for
parity_tests/test_oracle_hostile_reading.py). Fed as its docstring says, it attends across the
sequences of a batch; the time-first probe found it reading (seq, batch, d_model), every call was
handed so, and it matched with nothing named as not compared: full marks in `grade`."""
import torch.nn as nn


class ForgottenBatchFirstLayer(nn.Module):
    """x: (batch, seq, d_model) -> (batch, seq, d_model); mask (batch, 1, seq, seq), True = keep."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.h = num_heads
        self.self_attn = nn.MultiheadAttention(d_model, num_heads, dropout=0.0)
        self.linear1, self.linear2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)

    def forward(self, x, src_mask=None):
        hidden = None if src_mask is None else (~src_mask).expand(-1, self.h, -1, -1).flatten(0, 1)
        a, _ = self.self_attn(x, x, x, attn_mask=hidden, need_weights=False)
        x = self.norm1(x + a)
        return self.norm2(x + self.linear2(self.linear1(x).relu()))
