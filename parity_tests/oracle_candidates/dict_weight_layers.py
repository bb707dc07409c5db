"""A NumPy encoder layer written as a plain function taking its weights in dicts named for their
role with a holder word (`attn_weights = {"w_q", "w_k", "w_v", "w_o"}`, `ff_weights = {"w1", "b1",
"w2", "b2"}`), computing x @ W, with norms that have no gain or shift. Post-norm, no mask.
A correct version and a twin whose docstring says BUG."""
from __future__ import annotations

import numpy as np


def _norm(x, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(x.var(axis=-1, keepdims=True) + eps)


def _attention(x, w, num_heads, by_width=False):
    b, t, d = x.shape
    dh = d // num_heads

    def heads(z):
        return z.reshape(b, t, num_heads, dh).transpose(0, 2, 1, 3)                 # (B, H, T, dh)
    q, k, v = heads(x @ w["w_q"]), heads(x @ w["w_k"]), heads(x @ w["w_v"])
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d if by_width else dh)                  # (B, H, T, T)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    return (p @ v).transpose(0, 2, 1, 3).reshape(b, t, d) @ w["w_o"]                  # (B, T, D)


def dict_encoder_layer(x, attn_weights, ff_weights, num_heads):
    x = _norm(x + _attention(x, attn_weights, num_heads))
    h = np.maximum(0.0, x @ ff_weights["w1"] + ff_weights["b1"])                      # (B, T, F)
    return _norm(x + h @ ff_weights["w2"] + ff_weights["b2"])


def dict_encoder_layer_BUG(x, attn_weights, ff_weights, num_heads):
    """BUG: the attention scores are divided by sqrt(d_model), not by sqrt of the head width."""
    x = _norm(x + _attention(x, attn_weights, num_heads, by_width=True))
    h = np.maximum(0.0, x @ ff_weights["w1"] + ff_weights["b1"])
    return _norm(x + h @ ff_weights["w2"] + ff_weights["b2"])


def unnamed_dict_encoder_layer(x, attn_weights, pointwise, num_heads):
    """The same layer with its feed-forward dict under a name no list holds (`pointwise`)."""
    return dict_encoder_layer(x, attn_weights, pointwise, num_heads)


def unnamed_dict_encoder_layer_BUG(x, attn_weights, pointwise, num_heads):
    """BUG: as unnamed_dict_encoder_layer, with scores divided by sqrt(d_model)."""
    return dict_encoder_layer_BUG(x, attn_weights, pointwise, num_heads)
