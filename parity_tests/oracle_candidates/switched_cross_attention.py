"""Decoder layers in a library's config style whose config switches the cross-attention on: off
by default (`add_cross_attention=False`, `is_decoder=False`), the layer then builds none. Our own
code in that style; the wrong twin says BUG."""
from __future__ import annotations

import dataclasses
import math

import torch
from torch import nn


class CrossSwitchConfig:
    def __init__(self, hidden_size=8, num_attention_heads=2, intermediate_size=16, layer_norm_eps=1e-5,
                 hidden_act="relu", attention_dropout=0.1, add_cross_attention=False):
        self.hidden_size, self.num_attention_heads = hidden_size, num_attention_heads
        self.intermediate_size, self.layer_norm_eps = intermediate_size, layer_norm_eps
        self.hidden_act, self.attention_dropout = hidden_act, attention_dropout
        self.add_cross_attention = add_cross_attention


class RoleSwitchConfig(CrossSwitchConfig):
    def __init__(self, is_decoder=False, **kw):
        super().__init__(**kw)
        self.is_decoder = is_decoder


class SwitchAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        d = config.hidden_size
        self.h, self.dk = config.num_attention_heads, d // config.num_attention_heads
        self.q_lin, self.k_lin, self.v_lin, self.out_lin = (nn.Linear(d, d) for _ in range(4))
        self.drop = nn.Dropout(config.attention_dropout)

    def forward(self, hidden_states, context=None, additive_mask=None):
        ctx = hidden_states if context is None else context
        B = hidden_states.shape[0]

        def split(t):
            return t.view(B, -1, self.h, self.dk).transpose(1, 2)

        s = split(self.q_lin(hidden_states)) @ split(self.k_lin(ctx)).transpose(-1, -2) / math.sqrt(self.dk)
        if additive_mask is not None:
            s = s + additive_mask
        y = self.drop(torch.softmax(s, dim=-1)) @ split(self.v_lin(ctx))
        return self.out_lin(y.transpose(1, 2).reshape(B, -1, self.h * self.dk))


ACTS = {"relu": nn.ReLU, "gelu": nn.GELU}


class CrossSwitchDecoderLayer(nn.Module):
    """Post-norm decoder layer; cross-attention only when the config asks for it."""

    def __init__(self, config):
        super().__init__()
        d = config.hidden_size
        self.self_attn, self.self_norm = SwitchAttention(config), nn.LayerNorm(d, eps=config.layer_norm_eps)
        if self._cross(config):
            self.cross_attn = SwitchAttention(config)
            self.cross_norm = nn.LayerNorm(d, eps=config.layer_norm_eps)
        self.fc1, self.fc2 = nn.Linear(d, config.intermediate_size), nn.Linear(config.intermediate_size, d)
        self.act, self.final_norm = ACTS[config.hidden_act](), nn.LayerNorm(d, eps=config.layer_norm_eps)

    @staticmethod
    def _cross(config):
        return config.add_cross_attention

    def forward(self, hidden_states, attention_mask=None, encoder_hidden_states=None,
                encoder_attention_mask=None):
        x = self.self_norm(hidden_states + self.self_attn(hidden_states, None, attention_mask))
        if encoder_hidden_states is not None and hasattr(self, "cross_attn"):
            x = self.cross_norm(x + self.cross_attn(x, encoder_hidden_states, encoder_attention_mask))
        return self.final_norm(x + self.fc2(self.act(self.fc1(x))))


class RoleSwitchDecoderLayer(CrossSwitchDecoderLayer):
    """The same, the cross-attention switched by `is_decoder`."""

    @staticmethod
    def _cross(config):
        return config.is_decoder


class CrossSwitchDecoderLayerBUG(CrossSwitchDecoderLayer):
    """BUG: the cross-attention's residual is missing."""

    def forward(self, hidden_states, attention_mask=None, encoder_hidden_states=None,
                encoder_attention_mask=None):
        x = self.self_norm(hidden_states + self.self_attn(hidden_states, None, attention_mask))
        if encoder_hidden_states is not None and hasattr(self, "cross_attn"):
            x = self.cross_norm(self.cross_attn(x, encoder_hidden_states, encoder_attention_mask))
        return self.final_norm(x + self.fc2(self.act(self.fc1(x))))


@dataclasses.dataclass
class DataclassSwitchConfig:
    hidden_size: int = 8
    num_attention_heads: int = 2
    intermediate_size: int = 16
    layer_norm_eps: float = 1e-5
    hidden_act: str = "relu"
    attention_dropout: float = 0.1
    add_cross_attention: bool = False


class DataclassSwitchDecoderLayer(CrossSwitchDecoderLayer):
    """The same layer, its config a dataclass named by the annotation."""

    def __init__(self, config: DataclassSwitchConfig):
        super().__init__(config)
