"""PyTorch attention built from a config object whose head count is spelled in words no alias lists,
`config.heads_num` (test data for parity_tests/test_oracle_config_word_sizes.py). The twin plants
one bug."""
import math

import torch
import torch.nn as nn


class HeadsNumAttention(nn.Module):
    SOFTMAX_DIM = -1

    def __init__(self, config):
        super().__init__()
        self.heads = config.heads_num
        self.d_head = config.d_model // config.heads_num
        self.wq, self.wk = nn.Linear(config.d_model, config.d_model), nn.Linear(config.d_model, config.d_model)
        self.wv, self.wo = nn.Linear(config.d_model, config.d_model), nn.Linear(config.d_model, config.d_model)

    def forward(self, query, key, value, mask=None):      # (B, T, d); mask (B, 1, Tq, Tk), True = keep
        B, Tq, d = query.shape

        def split(t):                                      # (B, T, d) -> (B, h, T, d_head)
            return t.view(B, t.shape[1], self.heads, self.d_head).transpose(1, 2)

        q, k, v = split(self.wq(query)), split(self.wk(key)), split(self.wv(value))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        ctx = torch.softmax(scores, dim=self.SOFTMAX_DIM) @ v
        return self.wo(ctx.transpose(1, 2).reshape(B, Tq, d))


class HeadsNumAttentionKeySoftmax(HeadsNumAttention):
    """BUG: the softmax runs over the queries, not the keys."""

    SOFTMAX_DIM = -2
