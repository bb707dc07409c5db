"""Encoder layer and encoder stack (Vaswani et al. 2017, section 3.1).

One layer = self-attention sublayer + feed-forward sublayer, each wrapped in a residual connection,
dropout on the sublayer output and a LayerNorm, placed after the residual add (post-norm, the paper)
or before the sublayer (pre-norm, GPT-2 style):

    post-norm (norm_first=False)                  pre-norm (norm_first=True)
      x1  = norm1(x  + dropout1(attn(x, x, x)))     x1  = x  + dropout1(attn(h, h, h)),  h  = norm1(x)
      out = norm2(x1 + dropout2(ffn(x1)))           out = x1 + dropout2(ffn(h2)),        h2 = norm2(x1)

Backward of a residual y = x + f(x) is dx = dy + f'(x)^T dy: the two paths add.
"""
import numpy as np

from npformer.layers.attention import MultiHeadAttention
from npformer.layers.dropout import Dropout
from npformer.layers.feedforward import PositionwiseFeedForward
from npformer.layers.layernorm import LayerNorm
from npformer.layers.module import Module, ModuleList
from npformer.models.config import TransformerConfig


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
        attn, ffn = self.self_attn.forward, self.feed_forward.forward
        if self.config.norm_first:
            h = self.norm1.forward(x)                                                  # (B, T, D)
            x1 = x + self.dropout1.forward(attn(h, h, h, mask))                        # (B, T, D)
            out = x1 + self.dropout2.forward(ffn(self.norm2.forward(x1)))              # (B, T, D)
        else:
            x1 = self.norm1.forward(x + self.dropout1.forward(attn(x, x, x, mask)))    # (B, T, D)
            out = self.norm2.forward(x1 + self.dropout2.forward(ffn(x1)))              # (B, T, D)
        self._cache = (out,)                                                      # children: their own
        return out

    def backward(self, dout: np.ndarray) -> np.ndarray:
        self._require_cache()
        if self.config.norm_first:
            # out = x1 + dropout2(ffn(norm2(x1)))
            dx1 = dout + self.norm2.backward(self.feed_forward.backward(self.dropout2.backward(dout)))
            # x1 = x + dropout1(attn(h, h, h)), h = norm1(x): h feeds query, key and value
            dq, dk, dv = self.self_attn.backward(self.dropout1.backward(dx1))    # (B, T, D) each
            return dx1 + self.norm1.backward(dq + dk + dv)                        # (B, T, D)
        # out = norm2(r2), r2 = x1 + dropout2(ffn(x1))
        dr2 = self.norm2.backward(dout)                                           # (B, T, D)
        dx1 = dr2 + self.feed_forward.backward(self.dropout2.backward(dr2))       # (B, T, D)
        # x1 = norm1(r1), r1 = x + dropout1(attn(x, x, x)): x feeds query, key and value
        dr1 = self.norm1.backward(dx1)                                            # (B, T, D)
        dq, dk, dv = self.self_attn.backward(self.dropout1.backward(dr1))         # (B, T, D) each
        return dr1 + dq + dk + dv                                                 # (B, T, D)


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
