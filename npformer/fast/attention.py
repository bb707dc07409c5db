"""MultiHeadAttention's forward and backward with the softmax passes of npformer.fast.softmax.

`mha_forward(self, ...)` and `mha_backward(self, dout)` are the module's own steps (the same
children, cache and attn_weights; the checks stay in check_inputs, run once by __call__), with
attention_weights_forward/backward taken from npformer.fast.softmax on `self.fast_threads`
threads. npformer.fast.accelerate binds them to a module instance. Incremental decoding
(cache=...) is inference with a handful of rows: it runs the plain method.
"""
from __future__ import annotations

import numpy as np

from npformer.fast.softmax import attention_weights_backward, attention_weights_forward
from npformer.layers.attention import MHACache, merge_heads, split_heads

__all__ = ["mha_forward", "mha_backward"]


def mha_forward(self, query: np.ndarray, key: np.ndarray | None, value: np.ndarray | None,
                mask=None, cache: dict | None = None, static_kv: bool = False) -> np.ndarray:
    """MultiHeadAttention.forward, the softmax passes on self.fast_threads threads. Like the plain
    forward it takes what check_inputs returned (mask: the bool keep-mask) and checks nothing
    again; the projections and the dropout run their forward directly, as in the plain method."""
    if cache is not None:
        return type(self).forward(self, query, key, value, mask, cache, static_kv)
    H = self.num_heads
    q = split_heads(self.q_proj.forward(query), H)                     # (B, H, Tq, dk)
    k = split_heads(self.k_proj.forward(key), H)                       # (B, H, Tk, dk)
    v = split_heads(self.v_proj.forward(value), H)                     # (B, H, Tk, dk)
    weights, wcache = attention_weights_forward(q, k, mask, self.fast_threads)  # (B, H, Tq, Tk)
    dropped = self.attn_dropout.forward(weights)                       # (B, H, Tq, Tk) P~
    heads = dropped @ v                                                # (B, H, Tq, dk)
    out = self.out_proj.forward(merge_heads(heads))                    # (B, Tq, D)
    self.attn_weights = weights
    self._cache = MHACache(wcache, dropped, v, out)
    self._cached_forward = False
    return out


def mha_backward(self, dout: np.ndarray):
    """MultiHeadAttention.backward, the softmax backward on self.fast_threads threads."""
    if self._cached_forward:
        return type(self).backward(self, dout)                          # raises its error
    wcache, dropped, v, out = self._require_cache()
    dheads = split_heads(self.out_proj.backward(dout), self.num_heads)  # (B, H, Tq, dk)
    dv = dropped.swapaxes(-1, -2) @ dheads                             # (B, H, Tk, dk)
    ddropped = dheads @ v.swapaxes(-1, -2)                             # (B, H, Tq, Tk)
    dweights = self.attn_dropout.backward(ddropped)                    # (B, H, Tq, Tk)
    dq, dk = attention_weights_backward(dweights, wcache, self.fast_threads)
    dquery = self.q_proj.backward(merge_heads(dq))                     # (B, Tq, D)
    dkey = self.k_proj.backward(merge_heads(dk))                       # (B, Tk, D)
    dvalue = self.v_proj.backward(merge_heads(dv))                     # (B, Tk, D)
    return dquery, dkey, dvalue
