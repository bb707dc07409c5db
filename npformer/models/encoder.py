"""Encoder layer and encoder stack (Vaswani et al. 2017, section 3.1).

One layer = self-attention sublayer + feed-forward sublayer, each wrapped in a residual connection,
dropout on the sublayer output and a LayerNorm, placed after the residual add (post-norm, the paper)
or before the sublayer (pre-norm, GPT-2 style):

    post-norm (norm_first=False)                  pre-norm (norm_first=True)
      x1  = norm1(x  + dropout1(attn(x, x, x)))     x1  = x  + dropout1(attn(h, h, h)),  h  = norm1(x)
      out = norm2(x1 + dropout2(ffn(x1)))           out = x1 + dropout2(ffn(h2)),        h2 = norm2(x1)

residual_forward / residual_backward run one sublayer in either placement (the decoder uses them too).
"""
from __future__ import annotations

import numpy as np

from npformer.layers.attention import MultiHeadAttention
from npformer.layers.dropout import Dropout
from npformer.layers.feedforward import PositionwiseFeedForward
from npformer.layers.layernorm import LayerNorm
from npformer.layers.module import Module, ModuleList
from npformer.models.config import TransformerConfig


def residual_forward(x, norm, dropout, sublayer, norm_first: bool) -> np.ndarray:
    """One sublayer `sublayer` (B, T, D) -> (B, T, D) with its residual add, dropout and norm."""
    if norm_first:
        return x + dropout.forward(sublayer(norm.forward(x)))                       # (B, T, D)
    return norm.forward(x + dropout.forward(sublayer(x)))                           # (B, T, D)


def residual_backward(dout, norm, dropout, sublayer_backward, norm_first: bool) -> np.ndarray:
    """dx of residual_forward; sublayer_backward(d) returns the gradient at the sublayer's input.

    A residual y = x + f(x) gives dx = dy + f'(x)^T dy: the two paths add.
    """
    if norm_first:                                         # y = x + dropout(f(norm(x)))
        return dout + norm.backward(sublayer_backward(dropout.backward(dout)))     # (B, T, D)
    dr = norm.backward(dout)                               # y = norm(r), r = x + dropout(f(x))
    return dr + sublayer_backward(dropout.backward(dr))                             # (B, T, D)


def self_attention_backward(attn: MultiHeadAttention):
    """The backward of h -> attn(h, h, h): h is query, key and value, so its three gradients add."""
    def backward(d: np.ndarray) -> np.ndarray:
        dq, dk, dv = attn.backward(d)                                               # (B, T, D) each
        return dq + dk + dv
    return backward


class EncoderLayer(Module):
    """Self-attention + feed-forward, each with residual, dropout and LayerNorm (the module docstring).
    forward(x (B, T, D), mask=None) -> (B, T, D), mask a keep-mask for (B, H, T, T);
    backward(dout) -> dx (B, T, D). The config gives the sizes, norm_first and the dropout rates."""

    def __init__(self, config: TransformerConfig, rng: np.random.Generator | None = None):
        super().__init__()
        self.config = c = config
        self.dtype = np.dtype(c.dtype)
        self.self_attn = MultiHeadAttention(c.d_model, c.num_heads, c.attention_dropout, c.bias,
                                            c.dtype, rng)
        self.norm1 = LayerNorm(c.d_model, c.layer_norm_eps, c.dtype)
        self.dropout1 = Dropout(c.dropout)
        self.feed_forward = PositionwiseFeedForward(c.d_model, c.d_ff, c.activation,
                                                    c.activation_dropout, c.bias, c.dtype, rng)
        self.norm2 = LayerNorm(c.d_model, c.layer_norm_eps, c.dtype)
        self.dropout2 = Dropout(c.dropout)

    def forward(self, x: np.ndarray, mask=None) -> np.ndarray:
        def attn(h):
            return self.self_attn.forward(h, h, h, mask)

        pre = self.config.norm_first
        x1 = residual_forward(x, self.norm1, self.dropout1, attn, pre)                 # (B, T, D)
        out = residual_forward(x1, self.norm2, self.dropout2, self.feed_forward.forward, pre)
        self._cache = (out,)                                            # children: their own
        return out                                                                     # (B, T, D)

    def backward(self, dout: np.ndarray) -> np.ndarray:
        self._require_cache()
        pre = self.config.norm_first
        dx1 = residual_backward(dout, self.norm2, self.dropout2, self.feed_forward.backward, pre)
        return residual_backward(dx1, self.norm1, self.dropout1,
                                 self_attention_backward(self.self_attn), pre)        # (B, T, D)


class Encoder(Module):
    """config.num_encoder_layers EncoderLayers (layers.0, layers.1 ...), then LayerNorm `norm` when
    config.final_norm."""

    def __init__(self, config: TransformerConfig, rng: np.random.Generator | None = None):
        super().__init__()
        self.config = c = config
        self.dtype = np.dtype(c.dtype)
        self.layers = ModuleList(EncoderLayer(c, rng) for _ in range(c.num_encoder_layers))
        if c.final_norm:
            self.norm = LayerNorm(c.d_model, c.layer_norm_eps, c.dtype)

    def forward(self, x: np.ndarray, mask=None) -> np.ndarray:
        for layer in self.layers:
            x = layer.forward(x, mask)            # (B, T, D)
        if self.config.final_norm:
            x = self.norm.forward(x)              # (B, T, D)
        self._cache = (x,)
        return x

    def backward(self, dout: np.ndarray) -> np.ndarray:
        self._require_cache()
        dx = self.norm.backward(dout) if self.config.final_norm else dout    # (B, T, D)
        for layer in reversed(list(self.layers)):
            dx = layer.backward(dx)               # (B, T, D)
        return dx
