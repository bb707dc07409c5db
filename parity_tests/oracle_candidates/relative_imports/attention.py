"""Multi-head attention importing its score function from a sibling file, relatively."""
import torch
from torch import nn

from .scores import scaled_scores, unscaled_scores


class SiblingImportAttention(nn.Module):
    def __init__(self, d_model: int, num_heads: int):
        super().__init__()
        self.h, self.d_k = num_heads, d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        self.scores = scaled_scores

    def split(self, t: torch.Tensor) -> torch.Tensor:
        return t.view(t.shape[0], t.shape[1], self.h, self.d_k).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        q, k, v = self.split(self.q_proj(query)), self.split(self.k_proj(key)), self.split(self.v_proj(value))
        s = self.scores(q, k)
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        out = torch.softmax(s, dim=-1) @ v
        return self.out_proj(out.transpose(1, 2).reshape(query.shape[0], query.shape[1], -1))


class SiblingImportAttentionBUG(SiblingImportAttention):
    """BUG: the sibling's unscaled scores (no division by sqrt(d_k))."""

    def __init__(self, d_model: int, num_heads: int):
        super().__init__(d_model, num_heads)
        self.scores = unscaled_scores
