"""Layers configured by nested dicts, as translation code driven by a YAML file writes them: the
attention reads its head count and head widths from a dict (`args["n_head"]`, `args["d_k"]`), and
the layer takes `layer_args`, whose `self_attention` entry is the attention's own dict. Twins whose
docstring says BUG have one planted mistake."""
import math

import torch
from torch import nn


class SectionAttention(nn.Module):
    def __init__(self, width, args):
        super().__init__()
        self.n, self.dk, self.dv = args["n_head"], args["d_k"], args["d_v"]
        self.wq = nn.Linear(width, self.n * self.dk)
        self.wk = nn.Linear(width, self.n * self.dk)
        self.wv = nn.Linear(width, self.n * self.dv)
        self.wo = nn.Linear(self.n * self.dv, width)

    def weigh(self, q, k):
        return torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.dk), dim=-1)

    def forward(self, q_in, k_in, v_in, mask=None):
        b, tq, _ = q_in.shape
        split = lambda t, d: t.view(b, -1, self.n, d).transpose(1, 2)  # noqa: E731
        q, k, v = split(self.wq(q_in), self.dk), split(self.wk(k_in), self.dk), split(self.wv(v_in), self.dv)
        s = q @ k.transpose(-1, -2) / math.sqrt(self.dk)
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        a = self.weigh(q, k) if mask is None else torch.softmax(s, dim=-1)
        return self.wo((a @ v).transpose(1, 2).reshape(b, tq, self.n * self.dv))


class SectionAttentionBUG(SectionAttention):
    """BUG: the scores are divided by d_k, not its square root."""

    def weigh(self, q, k):
        return torch.softmax(q @ k.transpose(-1, -2) / self.dk, dim=-1)


class SectionEncoderLayer(nn.Module):
    def __init__(self, width, layer_args):
        super().__init__()
        self.attn = SectionAttention(width, layer_args["self_attention"])
        self.drop = nn.Dropout(layer_args["dropout"])
        self.n1, self.n2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.up, self.down = nn.Linear(width, layer_args["d_ff"]), nn.Linear(layer_args["d_ff"], width)

    def feed(self, x):
        return self.down(torch.relu(self.up(x)))

    def forward(self, x, mask=None):
        x = self.n1(x + self.drop(self.attn(x, x, x, mask)))
        return self.n2(x + self.drop(self.feed(x)))


class SectionEncoderLayerBUG(SectionEncoderLayer):
    """BUG: the feed-forward's residual is left out."""

    def forward(self, x, mask=None):
        x = self.n1(x + self.drop(self.attn(x, x, x, mask)))
        return self.n2(self.drop(self.feed(x)))
