"""Decoder layer and decoder stack (Vaswani et al. 2017, section 3.1), twin of npformer.models.decoder.

    post-norm (norm_first=False)                       pre-norm (norm_first=True)
      x1  = norm1(x  + dropout1(self_attn(x, x, x)))     x1  = x  + dropout1(self_attn(h1, h1, h1))
      x2  = norm2(x1 + dropout2(cross_attn(x1, m, m)))   x2  = x1 + dropout2(cross_attn(h2, m, m))
      out = norm3(x2 + dropout3(ffn(x2)))                out = x2 + dropout3(ffn(h3))

Without cross-attention (decoder-only models) the feed-forward sublayer's norm and dropout are named
norm2 / dropout2.
"""
from __future__ import annotations

import torch
from torch import nn

from torchformer.layers.attention import MultiHeadAttention
from torchformer.layers.dropout import Dropout
from torchformer.layers.feedforward import PositionwiseFeedForward
from torchformer.layers.layernorm import LayerNorm
from torchformer.layers.module import Module, to_torch_dtype


class DecoderLayer(Module):
    """Children (in this order): self_attn, norm1, dropout1, [cross_attn, norm2, dropout2],
    feed_forward, then norm3, dropout3 (with cross-attention) or norm2, dropout2 (without).

    forward(x (B, T, D), memory (B, S, D) or None, self_mask=None, memory_mask=None, cache=None)
    -> (B, T, D); cache a dict {"self": {...}, "cross": {...}} for incremental decoding.
    """

    def __init__(self, config, cross_attention: bool = True, rng=None, device=None):
        super().__init__()
        self.config = c = config
        self.dtype = to_torch_dtype(c.dtype)
        self.cross_attention = cross_attention

        def attention():
            return MultiHeadAttention(c.d_model, c.num_heads, c.attention_dropout, c.bias, c.dtype,
                                      rng, device)

        def norm():
            return LayerNorm(c.d_model, c.layer_norm_eps, c.dtype, device)

        self.self_attn = attention()
        self.norm1 = norm()
        self.dropout1 = Dropout(c.dropout)
        if cross_attention:
            self.cross_attn = attention()
            self.norm2 = norm()
            self.dropout2 = Dropout(c.dropout)
        self.feed_forward = PositionwiseFeedForward(c.d_model, c.d_ff, c.activation,
                                                    c.activation_dropout, c.bias, c.dtype, rng,
                                                    device)
        if cross_attention:
            self.norm3 = norm()
            self.dropout3 = Dropout(c.dropout)
        else:
            self.norm2 = norm()
            self.dropout2 = Dropout(c.dropout)

    @property
    def ff_norm(self) -> LayerNorm:
        return self.norm3 if self.cross_attention else self.norm2

    @property
    def ff_dropout(self) -> Dropout:
        return self.dropout3 if self.cross_attention else self.dropout2

    def forward(self, x: torch.Tensor, memory: torch.Tensor | None = None, self_mask=None,
                memory_mask=None, cache: dict | None = None) -> torch.Tensor:
        """The masks: bool keep-masks on x's device, or None (the call's guard converts them)."""
        self_cache = cross_cache = None
        if cache is not None:
            self_cache = cache.setdefault("self", {})
            cross_cache = cache.setdefault("cross", {})

        def self_block(h):
            return self.dropout1(self.self_attn(h, h, h, self_mask, cache=self_cache))

        def cross_block(h):
            return self.dropout2(self.cross_attn(h, memory, memory, memory_mask, cache=cross_cache,
                                                 static_kv=True))

        def ff_block(h):
            return self.ff_dropout(self.feed_forward(h))

        if self.config.norm_first:
            x = x + self_block(self.norm1(x))                        # (B, T, D) x1
            if self.cross_attention:
                x = x + cross_block(self.norm2(x))                   # (B, T, D) x2
            return x + ff_block(self.ff_norm(x))                     # (B, T, D)
        x = self.norm1(x + self_block(x))                            # (B, T, D) x1
        if self.cross_attention:
            x = self.norm2(x + cross_block(x))                       # (B, T, D) x2
        return self.ff_norm(x + ff_block(x))                         # (B, T, D)


class Decoder(Module):
    """config.num_decoder_layers DecoderLayers (`layers.0`, ...) and, with config.final_norm, `norm`.
    forward(x, memory=None, self_mask=None, memory_mask=None, caches=None) -> (B, T, D); caches a
    list with one layer cache dict per layer."""

    def __init__(self, config, cross_attention: bool = True, rng=None, device=None):
        super().__init__()
        self.config = c = config
        self.dtype = to_torch_dtype(c.dtype)
        self.cross_attention = cross_attention
        self.layers = nn.ModuleList(DecoderLayer(c, cross_attention, rng, device)
                                    for _ in range(c.num_decoder_layers))
        if c.final_norm:
            self.norm = LayerNorm(c.d_model, c.layer_norm_eps, c.dtype, device)

    def forward(self, x: torch.Tensor, memory: torch.Tensor | None = None, self_mask=None,
                memory_mask=None, caches: list | None = None) -> torch.Tensor:
        """The masks: bool keep-masks on x's device, or None (the call's guard converts them)."""
        for i, layer in enumerate(self.layers):
            x = layer(x, memory, self_mask, memory_mask,
                      cache=None if caches is None else caches[i])   # (B, T, D)
        if self.config.final_norm:
            x = self.norm(x)                                         # (B, T, D)
        return x


def new_caches(num_layers: int) -> list[dict]:
    """Empty per-layer caches for incremental decoding: [{"self": {}, "cross": {}}, ...]."""
    return [{"self": {}, "cross": {}} for _ in range(num_layers)]
