"""Attention built from a library-style config, in a module that also defines a composite config
(one holding a text and a vision config, as CLIPConfig and BlipConfig do): the composite answers
none of the widths, so the oracle must build the config that does.

PairAttention takes `config: PairVisionConfig | PairTextConfig` (the annotation names the classes);
the composite is defined first, as a library module imports it first;
PairPlainAttention takes an unannotated `config`; both compute the paper's self-attention and
return (output, weights). PairDropoutAttention reads `config.attention_dropout`, which only the
vision config has (the text one names it `attention_probs_dropout_prob`, as BLIP's do).
PairWideScaledAttention scales the scores by sqrt(d_model): a planted bug.
"""
from __future__ import annotations

import math

import torch
from torch import nn


class PairConfig:
    """The composite: sub-configs only, no width of its own."""
    def __init__(self, text_config=None, vision_config=None):
        self.text_config = PairTextConfig(**(text_config or {}))
        self.vision_config = PairVisionConfig(**(vision_config or {}))


class PairTextConfig:
    def __init__(self, hidden_size=32, num_attention_heads=4, intermediate_size=64,
                 attention_probs_dropout_prob=0.0):
        self.hidden_size, self.num_attention_heads = hidden_size, num_attention_heads
        self.intermediate_size = intermediate_size
        self.attention_probs_dropout_prob = attention_probs_dropout_prob


class PairVisionConfig:
    def __init__(self, hidden_size=48, num_attention_heads=6, intermediate_size=96,
                 attention_dropout=0.0):
        self.hidden_size, self.num_attention_heads = hidden_size, num_attention_heads
        self.intermediate_size, self.attention_dropout = intermediate_size, attention_dropout


class PairAttention(nn.Module):
    def __init__(self, config: PairVisionConfig | PairTextConfig):
        super().__init__()
        self.d, self.h = config.hidden_size, config.num_attention_heads
        self.dk = self.d // self.h
        self.q_proj = nn.Linear(self.d, self.d)
        self.k_proj = nn.Linear(self.d, self.d)
        self.v_proj = nn.Linear(self.d, self.d)
        self.out_proj = nn.Linear(self.d, self.d)

    def scale(self):
        return 1.0 / math.sqrt(self.dk)

    def forward(self, hidden_states, attention_mask=None):
        B, T, _ = hidden_states.shape

        def heads(x):                                       # (B, T, D) -> (B, h, T, dk)
            return x.view(B, T, self.h, self.dk).transpose(1, 2)
        q = heads(self.q_proj(hidden_states))
        k = heads(self.k_proj(hidden_states))
        v = heads(self.v_proj(hidden_states))
        scores = q @ k.transpose(-1, -2) * self.scale()
        if attention_mask is not None:                     # additive: 0 attend, -inf blocked
            scores = scores + attention_mask
        w = torch.softmax(scores, dim=-1)
        out = (w @ v).transpose(1, 2).reshape(B, T, self.d)
        return self.out_proj(out), w


class PairPlainAttention(PairAttention):
    def __init__(self, config):
        super().__init__(config)


class PairDropoutAttention(PairAttention):
    """Reads `attention_dropout`, which only the vision config has (as BLIP's attention)."""
    def __init__(self, config):
        super().__init__(config)
        self.dropout = nn.Dropout(config.attention_dropout)


class PairWideScaledAttention(PairAttention):
    def scale(self):
        return 1.0 / math.sqrt(self.d)                     # bug: sqrt(d_model), not sqrt(d_k)
