"""Decoder layer and decoder stack (Vaswani et al. 2017, section 3.1).

One layer = masked self-attention, cross-attention over the encoder output `memory` (optional: a
decoder-only language model has none), and a feed-forward sublayer; each sublayer is wrapped in a
residual connection, dropout on its output and a LayerNorm (post-norm or pre-norm, as the encoder):

    post-norm (norm_first=False)                       pre-norm (norm_first=True)
      x1  = norm1(x  + dropout1(self_attn(x, x, x)))     x1  = x  + dropout1(self_attn(h1, h1, h1))
      x2  = norm2(x1 + dropout2(cross_attn(x1, m, m)))   x2  = x1 + dropout2(cross_attn(h2, m, m))
      out = norm3(x2 + dropout3(ffn(x2)))                out = x2 + dropout3(ffn(h3))
                                                         (h1 = norm1(x), h2 = norm2(x1), h3 = norm3(x2))

Without cross-attention the feed-forward sublayer takes the second slot: its norm and dropout are then
named norm2 / dropout2 (names count sublayer slots, see docs/ARCHITECTURE.md).

Each sublayer runs through the encoder's residual_forward / residual_backward. The memory m is the key
and the value of the cross-attention, so dmemory = dkey + dvalue; over a stack the layers' add up.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from npformer.layers.attention import MultiHeadAttention
from npformer.layers.dropout import Dropout
from npformer.layers.feedforward import PositionwiseFeedForward
from npformer.layers.layernorm import LayerNorm
from npformer.layers.module import Module, ModuleList
from npformer.models.config import TransformerConfig
from npformer.models.encoder import residual_backward, residual_forward, self_attention_backward


class DecoderCache(NamedTuple):
    memory: np.ndarray | None     # (B, S, D) the memory (for the shape of a zero dmemory), or None
    out: np.ndarray               # (B, T, D) the forward output (backward checks dout against it)


class DecoderLayer(Module):
    """Masked self-attention, [cross-attention over memory], feed-forward (the module docstring).

    forward(x (B, T, D), memory (B, S, D) or None, self_mask=None, memory_mask=None, cache=None)
    -> (B, T, D); self_mask for (B, H, T, past + T), memory_mask for (B, H, T, S); cache: a dict
    {"self": {...}, "cross": {...}} for incremental decoding (inference only, see MultiHeadAttention).
    backward(dout) -> (dx (B, T, D), dmemory (B, S, D) or None).
    """

    def __init__(self, config: TransformerConfig, cross_attention: bool = True,
                 rng: np.random.Generator | None = None):
        super().__init__()
        self.config = c = config
        self.dtype = np.dtype(c.dtype)
        self.cross_attention = cross_attention

        def attention():
            return MultiHeadAttention(c.d_model, c.num_heads, c.attention_dropout, c.bias, c.dtype, rng)

        def norm():
            return LayerNorm(c.d_model, c.layer_norm_eps, c.dtype)

        self.self_attn = attention()
        self.norm1 = norm()
        self.dropout1 = Dropout(c.dropout)
        if cross_attention:
            self.cross_attn = attention()
            self.norm2 = norm()
            self.dropout2 = Dropout(c.dropout)
        self.feed_forward = PositionwiseFeedForward(c.d_model, c.d_ff, c.activation,
                                                    c.activation_dropout, c.bias, c.dtype, rng)
        # the feed-forward sublayer's norm and dropout: third slot with cross-attention, else second
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

    def forward(self, x: np.ndarray, memory: np.ndarray | None = None, self_mask=None,
                memory_mask=None, cache: dict | None = None) -> np.ndarray:
        self_cache = cross_cache = None
        if cache is not None:
            self_cache, cross_cache = cache.setdefault("self", {}), cache.setdefault("cross", {})

        def self_block(h):
            return self.self_attn.forward(h, h, h, self_mask, self_cache)

        def cross_block(h):                                             # m is key and value
            return self.cross_attn.forward(h, memory, memory, memory_mask, cross_cache, static_kv=True)

        pre = self.config.norm_first
        x = residual_forward(x, self.norm1, self.dropout1, self_block, pre)            # (B, T, D) x1
        if self.cross_attention:
            x = residual_forward(x, self.norm2, self.dropout2, cross_block, pre)       # (B, T, D) x2
        out = residual_forward(x, self.ff_norm, self.ff_dropout, self.feed_forward.forward, pre)
        # an incremental (cached) forward is inference only: nothing for backward
        self._cache = DecoderCache(memory, out) if cache is None else None
        self._inference = cache is not None
        return out                                                                     # (B, T, D)

    def backward(self, dout: np.ndarray):
        self._require_cache()
        dmemory = None

        def cross_backward(d):
            nonlocal dmemory
            dq, dk, dv = self.cross_attn.backward(d)           # (B, T, D), (B, S, D), (B, S, D)
            dmemory = dk + dv                                  # (B, S, D) m is key and value
            return dq

        pre = self.config.norm_first
        dx = residual_backward(dout, self.ff_norm, self.ff_dropout, self.feed_forward.backward, pre)
        if self.cross_attention:
            dx = residual_backward(dx, self.norm2, self.dropout2, cross_backward, pre)  # (B, T, D) dx1
        dx = residual_backward(dx, self.norm1, self.dropout1,
                               self_attention_backward(self.self_attn), pre)           # (B, T, D)
        return dx, dmemory


class Decoder(Module):
    """config.num_decoder_layers DecoderLayers (layers.0 ...), then LayerNorm `norm` when
    config.final_norm. caches: one layer cache per layer. Every layer reads the same memory, so
    dmemory is the sum of the layers' contributions."""

    def __init__(self, config: TransformerConfig, cross_attention: bool = True,
                 rng: np.random.Generator | None = None):
        super().__init__()
        self.config = c = config
        self.dtype = np.dtype(c.dtype)
        self.cross_attention = cross_attention
        self.layers = ModuleList(DecoderLayer(c, cross_attention, rng)
                                 for _ in range(c.num_decoder_layers))
        if c.final_norm:
            self.norm = LayerNorm(c.d_model, c.layer_norm_eps, c.dtype)

    def forward(self, x: np.ndarray, memory: np.ndarray | None = None, self_mask=None,
                memory_mask=None, caches: list | None = None) -> np.ndarray:
        for i, layer in enumerate(self.layers):
            x = layer.forward(x, memory, self_mask, memory_mask,
                              None if caches is None else caches[i])        # (B, T, D)
        if self.config.final_norm:
            x = self.norm.forward(x)                                         # (B, T, D)
        self._cache = DecoderCache(memory, x) if caches is None else None
        self._inference = caches is not None
        return x

    def backward(self, dout: np.ndarray):
        memory, _ = self._require_cache()
        dx = self.norm.backward(dout) if self.config.final_norm else dout     # (B, T, D)
        dmemory = None if memory is None else np.zeros_like(memory)          # (B, S, D)
        for layer in reversed(list(self.layers)):
            dx, dm = layer.backward(dx)                                      # (B, T, D), (B, S, D)
            if dm is not None:
                dmemory += dm                                                # (B, S, D) sum of layers
        return dx, dmemory
