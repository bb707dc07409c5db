"""Widths spelled out in full words, as tutorials written for readers name them:
`embedding_dimension`, `input_dimension` / `output_dimension`, `number_of_heads`, a positional
table taking `(length_sentence_max, dimension)`, and a block whose dataclass config holds the same
names. Each correct class has a twin whose docstring says BUG (one planted mistake)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn


class SpelledFeedForward(nn.Module):
    """The paper's feed-forward, its hidden width fixed at four times `embedding_dimension`."""

    def __init__(self, embedding_dimension: int):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(embedding_dimension, 4 * embedding_dimension), nn.ReLU(),
                                 nn.Linear(4 * embedding_dimension, embedding_dimension))

    def forward(self, x):
        return self.net(x)


class SpelledFeedForwardBUG(SpelledFeedForward):
    """BUG: the activation is applied after the down projection as well."""

    def forward(self, x):
        return torch.relu(self.net(x))


class SpelledAttention(nn.Module):
    """Causal self-attention built as `(input_dimension, output_dimension, number_of_heads)`."""

    def __init__(self, input_dimension: int, output_dimension: int, context_length: int,
                 number_of_heads: int):
        super().__init__()
        self.heads = number_of_heads
        self.head_width = output_dimension // number_of_heads
        self.query = nn.Linear(input_dimension, output_dimension)
        self.key = nn.Linear(input_dimension, output_dimension)
        self.value = nn.Linear(input_dimension, output_dimension)
        self.out_proj = nn.Linear(output_dimension, output_dimension)
        self.register_buffer("future", torch.triu(torch.ones(context_length, context_length),
                                                  diagonal=1).bool())

    def _split(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.heads, self.head_width).transpose(1, 2)

    def forward(self, x):
        b, n, _ = x.shape
        q, k, v = self._split(self.query(x)), self._split(self.key(x)), self._split(self.value(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_width)
        scores = scores.masked_fill(self.future[:n, :n], float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v
        return self.out_proj(out.transpose(1, 2).reshape(b, n, -1))


class SpelledAttentionBUG(SpelledAttention):
    """BUG: the scores are divided by the head width instead of its square root."""

    def forward(self, x):
        b, n, _ = x.shape
        q, k, v = self._split(self.query(x)), self._split(self.key(x)), self._split(self.value(x))
        scores = q @ k.transpose(-2, -1) / self.head_width
        scores = scores.masked_fill(self.future[:n, :n], float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v
        return self.out_proj(out.transpose(1, 2).reshape(b, n, -1))


@dataclass
class SpelledConfig:
    embedding_dimension: int = 768
    number_of_heads: int = 12
    feed_forward_dimension: int = 3072
    dropout_rate: float = 0.1

    def to_dict(self):
        return {"embedding_dimension": self.embedding_dimension,
                "number_of_heads": self.number_of_heads,
                "feed_forward_dimension": self.feed_forward_dimension,
                "dropout_rate": self.dropout_rate}


class SpelledEncoderLayer(nn.Module):
    """A post-norm encoder layer reading its sizes from `config.to_dict()`."""

    def __init__(self, config: SpelledConfig):
        super().__init__()
        c = config.to_dict()
        width = c["embedding_dimension"]
        self.attention = nn.MultiheadAttention(width, c["number_of_heads"], batch_first=True,
                                               dropout=c["dropout_rate"])
        self.up = nn.Linear(width, c["feed_forward_dimension"])
        self.down = nn.Linear(c["feed_forward_dimension"], width)
        self.norm1 = nn.LayerNorm(width)
        self.norm2 = nn.LayerNorm(width)

    def forward(self, x, mask=None):
        a, _ = self.attention(x, x, x, attn_mask=mask, need_weights=False)
        x = self.norm1(x + a)
        return self.norm2(x + self.down(torch.relu(self.up(x))))


class SpelledEncoderLayerBUG(SpelledEncoderLayer):
    """BUG: the feed-forward's residual is left out."""

    def forward(self, x, mask=None):
        a, _ = self.attention(x, x, x, attn_mask=mask, need_weights=False)
        x = self.norm1(x + a)
        return self.norm2(self.down(torch.relu(self.up(x))))


class SpelledPositionalTable:
    """NumPy sinusoidal table built as `(length_sentence_max, dimension)`, returned by forward()."""

    def __init__(self, length_sentence_max, dimension):
        pos = np.arange(length_sentence_max)[:, None]
        rate = np.power(10000.0, -np.arange(0, dimension, 2) / dimension)
        self.table = np.zeros((length_sentence_max, dimension))
        self.table[:, 0::2] = np.sin(pos * rate)
        self.table[:, 1::2] = np.cos(pos * rate)

    def forward(self):
        return self.table
