"""Right code in the style of oracle_hostile/silent_in_modes.py: it branches on the memory layout
of its inputs or on its bias flag, and works in place, on copies of its own. An attention function
(torch) taking a contiguous copy of a non-contiguous q and scaling it in place; a NumPy one scaling
its own copy of q in place; a multi-head attention honouring its `bias` flag that scales a copy of
its query in place. Each must match: they leave their inputs and autograd's graph as they were.
And one that raises on a non-contiguous q (a `.view` flattening it), loud wherever it runs: that
run is left uncompared, as before, and it matches too."""
import math

import numpy as np
import torch
from torch import nn


def copying_attention(q, k, v, mask=None):
    """torch: a non-contiguous q is copied (`.contiguous()`), the copy scaled in place."""
    q = q.contiguous() if not q.is_contiguous() else q.clone()
    q.mul_(1.0 / math.sqrt(q.shape[-1]))
    s = q @ k.transpose(-2, -1)
    if mask is not None:
        s = s.masked_fill(mask == 0, float("-inf"))
    p = torch.softmax(s, dim=-1)
    return p @ v, p


def copying_numpy_attention(q, k, v, mask=None):
    """NumPy: q read through a C-ordered copy of its own, scaled in place."""
    q = np.array(q, order="C", copy=True)
    q *= 1.0 / np.sqrt(q.shape[-1])
    s = q @ np.swapaxes(k, -1, -2)
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    p = e / e.sum(-1, keepdims=True)
    return p @ v, p


def viewing_attention(q, k, v, mask=None):
    """torch: q flattened with `.view`, which raises when q is not contiguous."""
    lead, d = q.shape[:-1], q.shape[-1]
    q = (q.view(-1, d) / math.sqrt(d)).view(*lead, d)
    s = q @ k.transpose(-2, -1)
    if mask is not None:
        s = s.masked_fill(mask == 0, float("-inf"))
    p = torch.softmax(s, dim=-1)
    return p @ v, p


class FlaggedAttention(nn.Module):
    """forward(query, key, value, mask) -> (output, weights); `bias=False` builds bias-free
    projections; the query is scaled, on a copy, in place."""

    def __init__(self, d_model, num_heads, bias=True):
        super().__init__()
        self.h, self.d_k = num_heads, d_model // num_heads
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d_model, d_model, bias=bias)
                                                                for _ in range(4))

    def _heads(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.h, self.d_k).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        q = self._heads(self.q_proj(query)).clone()
        q.mul_(1.0 / math.sqrt(self.d_k))
        k, v = self._heads(self.k_proj(key)), self._heads(self.v_proj(value))
        s = q @ k.transpose(-2, -1)
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        p = torch.softmax(s, dim=-1)
        b, n = query.shape[:2]
        return self.out_proj((p @ v).transpose(1, 2).reshape(b, n, -1)), p
