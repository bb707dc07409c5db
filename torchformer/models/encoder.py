"""Encoder layer and encoder stack (Vaswani et al. 2017, section 3.1), twin of npformer.models.encoder.

    post-norm (norm_first=False)                  pre-norm (norm_first=True)
      x1  = norm1(x  + dropout1(attn(x, x, x)))     x1  = x  + dropout1(attn(h, h, h)),  h  = norm1(x)
      out = norm2(x1 + dropout2(ffn(x1)))           out = x1 + dropout2(ffn(h2)),        h2 = norm2(x1)
"""
from __future__ import annotations

import torch
from torch import nn

from torchformer.layers.attention import MultiHeadAttention
from torchformer.layers.dropout import Dropout
from torchformer.layers.feedforward import PositionwiseFeedForward
from torchformer.layers.layernorm import LayerNorm
from torchformer.layers.module import Module, to_torch_dtype


class EncoderLayer(Module):
    """Children (in this order): self_attn, norm1, dropout1, feed_forward, norm2, dropout2.
    forward(x (B, T, D), mask=None) -> (B, T, D); mask a keep-mask broadcastable to (B, H, T, T)."""

    def __init__(self, config, rng=None, device=None):
        super().__init__()
        self.config = c = config
        self.dtype = to_torch_dtype(c.dtype)
        self.self_attn = MultiHeadAttention(c.d_model, c.num_heads, c.attention_dropout, c.bias,
                                            c.dtype, rng, device)
        self.norm1 = LayerNorm(c.d_model, c.layer_norm_eps, c.dtype, device)
        self.dropout1 = Dropout(c.dropout)
        self.feed_forward = PositionwiseFeedForward(c.d_model, c.d_ff, c.activation,
                                                    c.activation_dropout, c.bias, c.dtype, rng,
                                                    device)
        self.norm2 = LayerNorm(c.d_model, c.layer_norm_eps, c.dtype, device)
        self.dropout2 = Dropout(c.dropout)

    def forward(self, x: torch.Tensor, mask=None) -> torch.Tensor:
        """mask: a bool keep-mask on x's device, or None (the call's guard converts it)."""
        c = self.config
        if c.norm_first:
            h = self.norm1(x)                                                   # (B, T, D)
            x = x + self.dropout1(self.self_attn(h, h, h, mask))                # (B, T, D) x1
            return x + self.dropout2(self.feed_forward(self.norm2(x)))          # (B, T, D)
        x = self.norm1(x + self.dropout1(self.self_attn(x, x, x, mask)))        # (B, T, D) x1
        return self.norm2(x + self.dropout2(self.feed_forward(x)))              # (B, T, D)


class Encoder(Module):
    """config.num_encoder_layers EncoderLayers (`layers.0`, ...) and, with config.final_norm, `norm`.
    forward(x (B, T, D), mask=None) -> (B, T, D)."""

    def __init__(self, config, rng=None, device=None):
        super().__init__()
        self.config = c = config
        self.dtype = to_torch_dtype(c.dtype)
        self.layers = nn.ModuleList(EncoderLayer(c, rng, device)
                                    for _ in range(c.num_encoder_layers))
        if c.final_norm:
            self.norm = LayerNorm(c.d_model, c.layer_norm_eps, c.dtype, device)

    def forward(self, x: torch.Tensor, mask=None) -> torch.Tensor:
        """mask: a bool keep-mask on x's device, or None (the call's guard converts it)."""
        c = self.config
        for layer in self.layers:
            x = layer(x, mask)                                                  # (B, T, D)
        if c.final_norm:
            x = self.norm(x)                                                    # (B, T, D)
        return x

