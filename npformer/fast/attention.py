"""MultiHeadAttention's forward and backward with the softmax passes of npformer.fast.softmax and
the head merges folded into the products before them.

`mha_forward(self, ...)` and `mha_backward(self, dout)` are the module's own steps (the same
children, cache and attn_weights; the checks stay in check_inputs, run once by __call__), with
attention_weights_forward and the softmax backward taken from npformer.fast.softmax on
`self.fast_threads` threads. npformer.fast.accelerate binds them to a module instance.
Incremental decoding (cache=...) is inference with a handful of rows: it runs the plain method.

merged_product(a, b) is merge_heads(a @ b) without the copy: the per-head products are written
straight into the (B, T, H, dk) memory of the merged array (each head's (T, dk) block is a BLAS
output with row stride H * dk). The products are the same calls on the same inputs, so the result
is the plain one bit for bit (tests/npformer/fast/test_fast_short_rows.py).
"""
from __future__ import annotations

import numpy as np

from npformer.fast.softmax import (
    attention_weights_backward,
    attention_weights_forward,
    softmax_scores_backward,
)
from npformer.layers.attention import MHACache, merge_heads, split_heads

__all__ = ["merged_product", "mha_forward", "mha_backward"]


def merged_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """merge_heads(a @ b) for a (B, H, T, n) and b (B, H, n, dk): (B, T, H * dk)."""
    if a.ndim != 4 or b.ndim != 4 or a.shape[:2] != b.shape[:2]:
        return merge_heads(a @ b)                                      # broadcasting: plain
    B, H, T, _ = a.shape
    dk = b.shape[-1]
    out = np.empty((B, T, H, dk), dtype=np.result_type(a, b))          # (B, T, H, dk)
    np.matmul(a, b, out=out.transpose(0, 2, 1, 3))                     # written as (B, H, T, dk)
    return out.reshape(B, T, H * dk)


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
    out = self.out_proj.forward(merged_product(dropped, v))            # (B, Tq, D)
    self.attn_weights = weights
    self._cache = MHACache(wcache, dropped, v, out)
    self._inference = False
    return out


def mha_backward(self, dout: np.ndarray):
    """MultiHeadAttention.backward, the softmax backward on self.fast_threads threads."""
    wcache, dropped, v, out = self._require_cache()
    q, k, weights, scale = wcache
    dheads = split_heads(self.out_proj.backward(dout), self.num_heads)  # (B, H, Tq, dk)
    dv = merged_product(dropped.swapaxes(-1, -2), dheads)              # (B, Tk, D) P~^T dO
    ddropped = dheads @ v.swapaxes(-1, -2)                             # (B, H, Tq, Tk)
    dweights = self.attn_dropout.backward(ddropped)                    # (B, H, Tq, Tk)
    dscores = softmax_scores_backward(dweights, weights, self.fast_threads)
    if dscores is None:                                                # shapes broadcast: plain
        dq, dk = attention_weights_backward(dweights, wcache, 1)
        dq, dk = merge_heads(dq), merge_heads(dk)
    else:
        dq = merged_product(dscores, k)                                # (B, Tq, D) dS K
        dq *= scale
        dk = merged_product(dscores.swapaxes(-1, -2), q)               # (B, Tk, D) dS^T Q
        dk *= scale
    dquery = self.q_proj.backward(dq)                                  # (B, Tq, D)
    dkey = self.k_proj.backward(dk)                                    # (B, Tk, D)
    dvalue = self.v_proj.backward(dv)                                  # (B, Tk, D)
    return dquery, dkey, dvalue
