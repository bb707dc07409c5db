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

Backward: a residual y = x + f(x) gives dx = dy + f'(x)^T dy. The memory m is the key and the value of
the cross-attention, so dmemory = dkey + dvalue; over a stack every layer's dmemory adds up.
"""
from typing import NamedTuple

import numpy as np

from npformer.layers.attention import MultiHeadAttention
from npformer.layers.dropout import Dropout
from npformer.layers.feedforward import PositionwiseFeedForward
from npformer.layers.layernorm import LayerNorm
from npformer.layers.module import Module, ModuleList
from npformer.models.config import TransformerConfig


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
            self_cache = cache.setdefault("self", {})
            cross_cache = cache.setdefault("cross", {})

        def self_block(h):                                                   # (B, T, D) -> (B, T, D)
            return self.dropout1.forward(self.self_attn.forward(h, h, h, self_mask, self_cache))

        def cross_block(h):                                                  # (B, T, D) -> (B, T, D)
            return self.dropout2.forward(self.cross_attn.forward(h, memory, memory, memory_mask,
                                                                 cross_cache, static_kv=True))

        def ff_block(h):                                                     # (B, T, D) -> (B, T, D)
            return self.ff_dropout.forward(self.feed_forward.forward(h))

        if self.config.norm_first:
            x = x + self_block(self.norm1.forward(x))                        # (B, T, D) x1
            if self.cross_attention:
                x = x + cross_block(self.norm2.forward(x))                   # (B, T, D) x2
            out = x + ff_block(self.ff_norm.forward(x))                      # (B, T, D)
        else:
            x = self.norm1.forward(x + self_block(x))                        # (B, T, D) x1
            if self.cross_attention:
                x = self.norm2.forward(x + cross_block(x))                   # (B, T, D) x2
            out = self.ff_norm.forward(x + ff_block(x))                      # (B, T, D)
        # an incremental (cached) forward is inference only: nothing for backward
        self._cache = DecoderCache(memory, out) if cache is None else None
        self._inference = cache is not None
        return out

    def backward(self, dout: np.ndarray):
        self._require_cache()
        dmemory = None
        if self.config.norm_first:
            # out = x2 + dropout3(ffn(norm3(x2)))
            dx = dout + self.ff_norm.backward(
                self.feed_forward.backward(self.ff_dropout.backward(dout)))          # (B, T, D) dx2
            if self.cross_attention:
                # x2 = x1 + dropout2(cross_attn(norm2(x1), m, m)): m is key and value
                dq, dk, dv = self.cross_attn.backward(self.dropout2.backward(dx))   # (B,T,D),(B,S,D)x2
                dmemory = dk + dv                                                   # (B, S, D)
                dx = dx + self.norm2.backward(dq)                                   # (B, T, D) dx1
            # x1 = x + dropout1(self_attn(h, h, h)), h = norm1(x)
            dq, dk, dv = self.self_attn.backward(self.dropout1.backward(dx))        # (B, T, D) each
            return dx + self.norm1.backward(dq + dk + dv), dmemory                  # (B, T, D) dx
        # out = ff_norm(r3), r3 = x2 + dropout3(ffn(x2))
        dr = self.ff_norm.backward(dout)                                            # (B, T, D) dr3
        dx = dr + self.feed_forward.backward(self.ff_dropout.backward(dr))          # (B, T, D) dx2
        if self.cross_attention:
            # x2 = norm2(r2), r2 = x1 + dropout2(cross_attn(x1, m, m))
            dr = self.norm2.backward(dx)                                            # (B, T, D) dr2
            dq, dk, dv = self.cross_attn.backward(self.dropout2.backward(dr))       # (B,T,D),(B,S,D)x2
            dmemory = dk + dv                                                       # (B, S, D)
            dx = dr + dq                                                            # (B, T, D) dx1
        # x1 = norm1(r1), r1 = x + dropout1(self_attn(x, x, x))
        dr = self.norm1.backward(dx)                                                # (B, T, D) dr1
        dq, dk, dv = self.self_attn.backward(self.dropout1.backward(dr))            # (B, T, D) each
        return dr + dq + dk + dv, dmemory                                           # (B, T, D) dx


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
