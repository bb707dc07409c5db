"""Layers assembled from blocks handed to their constructor, with names that say nothing the
oracle's role table knows (`mixing_attention`, `pointwise_net`), no annotations, widths
called `model_dimension`, a feed-forward whose width is a multiple fixed by its own code, and the
norms kept inside residual wrappers in a ModuleList. Our own code in that style; wrong twins say BUG.
"""
from __future__ import annotations

import copy
import math

import torch
from torch import nn


class HeadedAttention(nn.Module):
    """Multi-head attention: four (d, d) projections with biases."""

    def __init__(self, model_dimension, heads, p_drop):
        super().__init__()
        self.heads, self.width = heads, model_dimension // heads
        self.to_q = nn.Linear(model_dimension, model_dimension)
        self.to_k = nn.Linear(model_dimension, model_dimension)
        self.to_v = nn.Linear(model_dimension, model_dimension)
        self.merge = nn.Linear(model_dimension, model_dimension)
        self.drop = nn.Dropout(p_drop)

    def forward(self, query, key, value, mask=None):
        B = query.shape[0]

        def split(t):
            return t.reshape(B, -1, self.heads, self.width).permute(0, 2, 1, 3)

        q, k, v = split(self.to_q(query)), split(self.to_k(key)), split(self.to_v(value))
        s = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.width)
        if mask is not None:
            s = s.masked_fill(mask == 0, float("-inf"))
        w = self.drop(torch.softmax(s, dim=-1))
        y = torch.matmul(w, v).permute(0, 2, 1, 3).reshape(B, -1, self.heads * self.width)
        return self.merge(y)


class CountedHeadsAttention(HeadedAttention):
    """The same, its head count under a name no alias holds (`number_of_heads`): it takes the heads
    by position after the width named for the model."""

    def __init__(self, model_dimension, number_of_heads, p_drop):
        super().__init__(model_dimension, number_of_heads, p_drop)


class PointwiseNet(nn.Module):
    """Feed-forward with its hidden width fixed at `widen` x the model width."""

    def __init__(self, model_dimension, p_drop, widen=4):
        super().__init__()
        self.up = nn.Linear(model_dimension, widen * model_dimension)
        self.down = nn.Linear(widen * model_dimension, model_dimension)
        self.drop = nn.Dropout(p_drop)

    def forward(self, x):
        return self.down(self.drop(torch.relu(self.up(x))))


class Residual(nn.Module):
    """x + sublayer(x), then a LayerNorm (the paper's post-norm order)."""

    def __init__(self, model_dimension, p_drop):
        super().__init__()
        self.norm = nn.LayerNorm(model_dimension)
        self.drop = nn.Dropout(p_drop)

    def forward(self, x, sublayer):
        return self.norm(x + self.drop(sublayer(x)))


class InjectedEncoderLayer(nn.Module):
    """Post-norm encoder layer built around the blocks it is given."""

    def __init__(self, model_dimension, p_drop, mixing_attention, pointwise_net):
        super().__init__()
        self.wrappers = nn.ModuleList([Residual(model_dimension, p_drop) for _ in range(2)])
        self.mixing_attention = mixing_attention
        self.pointwise_net = pointwise_net

    def forward(self, src, src_mask):
        src = self.wrappers[0](src, lambda t: self.mixing_attention(t, t, t, src_mask))
        return self.wrappers[1](src, self.pointwise_net)


class InjectedEncoderLayerPreNorm(InjectedEncoderLayer):
    """Normalises before each sublayer (pre-norm), not after the residual sum: right as pre-norm code,
    a BUG where the assignment fixes post-norm (norm_first=False)."""

    def forward(self, src, src_mask):
        for wrapper, fn in ((self.wrappers[0], lambda t: self.mixing_attention(t, t, t, src_mask)),
                            (self.wrappers[1], self.pointwise_net)):
            src = src + fn(wrapper.norm(src))
        return src


class InjectedEncoderLayerNoResidual(InjectedEncoderLayer):
    """BUG: the feed-forward sublayer has no residual connection."""

    def forward(self, src, src_mask):
        src = self.wrappers[0](src, lambda t: self.mixing_attention(t, t, t, src_mask))
        return self.wrappers[1].norm(self.pointwise_net(src))


class InjectedDecoderLayer(nn.Module):
    """Post-norm decoder layer: the one attention it is given is copied for self and cross."""

    def __init__(self, model_dimension, p_drop, mixing_attention, pointwise_net):
        super().__init__()
        self.wrappers = nn.ModuleList([Residual(model_dimension, p_drop) for _ in range(3)])
        self.self_mixing_attention = copy.deepcopy(mixing_attention)
        self.memory_mixing_attention = copy.deepcopy(mixing_attention)
        self.pointwise_net = pointwise_net

    def forward(self, tgt, memory, tgt_mask, memory_mask):
        tgt = self.wrappers[0](tgt, lambda t: self.self_mixing_attention(t, t, t, tgt_mask))
        tgt = self.wrappers[1](tgt, lambda t: self.memory_mixing_attention(t, memory, memory, memory_mask))
        return self.wrappers[2](tgt, self.pointwise_net)


class InjectedDecoderLayerSwapped(InjectedDecoderLayer):
    """BUG: the second attention takes its keys and values from the target, not the memory."""

    def forward(self, tgt, memory, tgt_mask, memory_mask):
        tgt = self.wrappers[0](tgt, lambda t: self.self_mixing_attention(t, t, t, tgt_mask))
        tgt = self.wrappers[1](tgt, lambda t: self.memory_mixing_attention(t, t, t, tgt_mask))
        return self.wrappers[2](tgt, self.pointwise_net)
