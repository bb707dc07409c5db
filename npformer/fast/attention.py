"""MultiHeadAttention's forward and backward with the softmax passes of npformer.fast.softmax.

`mha_forward(self, ...)` and `mha_backward(self, dout)` are the module's own steps (the same
checks, children, cache and attn_weights), with attention_weights_forward/backward taken from
npformer.fast.softmax on `self.fast_threads` threads. npformer.fast.accelerate binds them to a
module instance. Incremental decoding (cache=...) is inference with a handful of rows: it runs
the plain method.
"""
from __future__ import annotations

import numpy as np

from npformer.fast.softmax import attention_weights_backward, attention_weights_forward
from npformer.guards.validation import check_float, check_grad, check_mask
from npformer.layers.attention import MHACache, merge_heads, split_heads

__all__ = ["mha_forward", "mha_backward"]


def mha_forward(self, query: np.ndarray, key: np.ndarray | None, value: np.ndarray | None,
                mask=None, cache: dict | None = None, static_kv: bool = False) -> np.ndarray:
    """MultiHeadAttention.forward, the softmax passes on self.fast_threads threads."""
    if cache is not None:
        return type(self).forward(self, query, key, value, mask, cache, static_kv)
    check_float("query", query, dtype=self.dtype, ndim=3)
    B, Tq, D = query.shape
    if D != self.d_model:
        raise ValueError(f"query: expected shape (B, Tq, {self.d_model}), got {query.shape}")
    for name, x in (("key", key), ("value", value)):
        check_float(name, x, dtype=self.dtype, ndim=3)
        if x.shape[0] != B or x.shape[2] != self.d_model:
            raise ValueError(f"{name}: expected shape ({B}, Tk, {self.d_model}), got {x.shape}")
    if value.shape != key.shape:
        raise ValueError(f"value: expected the key's shape {key.shape}, got {value.shape}")
    H = self.num_heads
    keep = check_mask("mask", mask, (B, H, Tq, key.shape[1]))

    q = split_heads(self.q_proj(query), H)                             # (B, H, Tq, dk)
    k = split_heads(self.k_proj(key), H)                               # (B, H, Tk, dk)
    v = split_heads(self.v_proj(value), H)                             # (B, H, Tk, dk)
    weights, wcache = attention_weights_forward(q, k, keep, self.fast_threads)  # (B, H, Tq, Tk)
    dropped = self.attn_dropout(weights)                               # (B, H, Tq, Tk) P~
    heads = dropped @ v                                                # (B, H, Tq, dk)
    out = self.out_proj(merge_heads(heads))                            # (B, Tq, D)
    self.attn_weights = weights
    self._cache = MHACache(wcache, dropped, v, out)
    self._cached_forward = False
    return out


def mha_backward(self, dout: np.ndarray):
    """MultiHeadAttention.backward, the softmax backward on self.fast_threads threads."""
    if self._cached_forward:
        return type(self).backward(self, dout)                          # raises its error
    wcache, dropped, v, out = self._require_cache()
    check_grad("dout", dout, out)
    dheads = split_heads(self.out_proj.backward(dout), self.num_heads)  # (B, H, Tq, dk)
    dv = dropped.swapaxes(-1, -2) @ dheads                             # (B, H, Tk, dk)
    ddropped = dheads @ v.swapaxes(-1, -2)                             # (B, H, Tq, Tk)
    dweights = self.attn_dropout.backward(ddropped)                    # (B, H, Tq, Tk)
    dq, dk = attention_weights_backward(dweights, wcache, self.fast_threads)
    dquery = self.q_proj.backward(merge_heads(dq))                     # (B, Tq, D)
    dkey = self.k_proj.backward(merge_heads(dk))                       # (B, Tk, D)
    dvalue = self.v_proj.backward(merge_heads(dv))                     # (B, Tk, D)
    return dquery, dkey, dvalue
