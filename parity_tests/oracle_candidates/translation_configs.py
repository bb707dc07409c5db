"""Layers of a translation model built from one config dataclass whose vocabulary sizes, sequence
lengths and padding ids are required fields the layers never read (only the model's embeddings
and masks would): a post-norm encoder layer and a post-norm decoder layer taking the memory first.
Correct versions and twins whose docstring says BUG."""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class TranslationConfig:
    source_vocab: int
    targetVocabSize: int
    src_max_length: int
    tgt_max_length: int
    src_pad_idx: int
    trg_padding_token: int
    d_model: int = 512
    n_heads: int = 8
    d_ffn: int = 2048
    dropout: float = 0.1


class _Attention(nn.Module):
    def __init__(self, cfg: TranslationConfig, scale_by_width: bool = False):
        super().__init__()
        self.h, self.dk = cfg.n_heads, cfg.d_model // cfg.n_heads
        self.scale = math.sqrt(cfg.d_model if scale_by_width else self.dk)
        self.w_q = nn.Linear(cfg.d_model, cfg.d_model)
        self.w_k = nn.Linear(cfg.d_model, cfg.d_model)
        self.w_v = nn.Linear(cfg.d_model, cfg.d_model)
        self.w_o = nn.Linear(cfg.d_model, cfg.d_model)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, q, k, v, mask=None):
        b = q.size(0)

        def heads(z):
            return z.view(b, -1, self.h, self.dk).transpose(1, 2)
        q, k, v = heads(self.w_q(q)), heads(self.w_k(k)), heads(self.w_v(v))
        scores = q @ k.transpose(-2, -1) / self.scale
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        out = self.drop(scores.softmax(-1)) @ v
        return self.w_o(out.transpose(1, 2).reshape(b, -1, self.h * self.dk))


class _FeedForward(nn.Module):
    def __init__(self, cfg: TranslationConfig):
        super().__init__()
        self.fc1 = nn.Linear(cfg.d_model, cfg.d_ffn)
        self.fc2 = nn.Linear(cfg.d_ffn, cfg.d_model)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x):
        return self.fc2(self.drop(torch.relu(self.fc1(x))))


class ConfigEncoderLayer(nn.Module):
    def __init__(self, config: TranslationConfig):
        super().__init__()
        self.attention = _Attention(config)
        self.feed_forward = _FeedForward(config)
        self.norm1 = nn.LayerNorm(config.d_model)
        self.norm2 = nn.LayerNorm(config.d_model)
        self.drop = nn.Dropout(config.dropout)

    def forward(self, x, src_mask=None):
        x = self.norm1(x + self.drop(self.attention(x, x, x, src_mask)))
        return self.norm2(x + self.drop(self.feed_forward(x)))


class ConfigEncoderLayerWidthScale(ConfigEncoderLayer):
    """BUG: the attention scores are divided by sqrt(d_model), not sqrt(d_k)."""

    def __init__(self, config: TranslationConfig):
        super().__init__(config)
        self.attention = _Attention(config, scale_by_width=True)


class ConfigDecoderLayer(nn.Module):
    def __init__(self, config: TranslationConfig):
        super().__init__()
        self.self_attention = _Attention(config)
        self.cross_attention = _Attention(config)
        self.feed_forward = _FeedForward(config)
        self.norm1 = nn.LayerNorm(config.d_model)
        self.norm2 = nn.LayerNorm(config.d_model)
        self.norm3 = nn.LayerNorm(config.d_model)
        self.drop = nn.Dropout(config.dropout)

    def forward(self, memory, target, src_mask, target_mask):
        x = self.norm1(target + self.drop(self.self_attention(target, target, target, target_mask)))
        x = self.norm2(x + self.drop(self.cross_attention(x, memory, memory, src_mask)))
        return self.norm3(x + self.drop(self.feed_forward(x)))


class ConfigDecoderLayerSelfMemory(ConfigDecoderLayer):
    """BUG: the cross-attention attends to the target itself, never to the memory."""

    def forward(self, memory, target, src_mask, target_mask):
        x = self.norm1(target + self.drop(self.self_attention(target, target, target, target_mask)))
        x = self.norm2(x + self.drop(self.cross_attention(x, x, x, target_mask)))
        return self.norm3(x + self.drop(self.feed_forward(x)))
