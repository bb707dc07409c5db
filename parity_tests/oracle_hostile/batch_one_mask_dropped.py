"""Multi-head attention dropping a mask whose batch axis is 1 while the batch has more rows: the
causal mask as `torch.tril(torch.ones(T, T, dtype=torch.bool))[None, None]` makes it, (1, 1, T, T),
the form a decoder hands its self-attention. Right for every mask with a batch axis of the batch's
size, the only form the oracle handed over (key paddings also as (B, 1, 1, Tk)), so it matched."""
import math

from torch import nn


class BatchOneMaskDropped(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def _split(self, t):                          # (B, T, D) -> (B, H, T, D / H)
        B, T, D = t.shape
        return t.view(B, T, self.h, D // self.h).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        if mask is not None and mask.shape[0] != query.shape[0]:
            mask = None
        q, k, v = self._split(self.q_proj(query)), self._split(self.k_proj(key)), self._split(self.v_proj(value))
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        out = scores.softmax(-1) @ v              # (B, H, Tq, D / H)
        B, H, T, w = out.shape
        return self.out_proj(out.transpose(1, 2).reshape(B, T, H * w))
