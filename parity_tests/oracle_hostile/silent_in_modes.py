"""Wrong code that hides its wrong path behind something the harness raises there: on a
non-contiguous input (every input of an attention after `.transpose(1, 2)`), or built with its
bias flag False, it computes without the 1/sqrt(d) scale (or with its biases still added) and also
hands back a detached output or nudges an input in place. Each matched: a run in those modes that
raised was not compared, and the harness's own `missing_gradient` / `mutates_input` raised there
counted as the candidate raising, loudly. In real use nothing raises: the answer is wrong and
silent."""
import math

import numpy as np
import torch
from torch import nn


def detached_attention(q, k, v, mask=None):
    """torch: unscaled, and detached from autograd, when q is not contiguous."""
    plain = q.is_contiguous()
    s = q @ k.transpose(-2, -1) / (math.sqrt(q.shape[-1]) if plain else 1.0)
    if mask is not None:
        s = s.masked_fill(mask == 0, float("-inf"))
    p = torch.softmax(s, dim=-1)
    return (p @ v, p) if plain else ((p @ v).detach(), p.detach())


def _nudged(x) -> bool:
    try:
        x.flags.writeable = True
        x[...] = x * 1.0000001
        return True
    except ValueError:
        return False


def nudging_attention(q, k, v, mask=None):
    """NumPy: unscaled when q is not C-contiguous and can be written (q nudged in place then)."""
    wrong = not q.flags.c_contiguous and _nudged(q)
    s = q @ np.swapaxes(k, -1, -2) / (1.0 if wrong else np.sqrt(q.shape[-1]))
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    p = e / e.sum(-1, keepdims=True)
    return p @ v, p


class FlaggedAttention(nn.Module):
    """Takes `bias` and ignores it (biases always added); built with it False it nudges its query
    in place."""

    def __init__(self, d_model, num_heads, bias=True):
        super().__init__()
        self.h, self.d_k, self.flag = num_heads, d_model // num_heads, bias
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d_model, d_model)
                                                                for _ in range(4))

    def _heads(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.h, self.d_k).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        q, k, v = self._heads(self.q_proj(query)), self._heads(self.k_proj(key)), \
            self._heads(self.v_proj(value))
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        p = torch.softmax(s, dim=-1)
        b, n = query.shape[:2]
        out = self.out_proj((p @ v).transpose(1, 2).reshape(b, n, -1))
        if not self.flag:
            with torch.no_grad():
                query.mul_(1.0000001)
        return out, p
