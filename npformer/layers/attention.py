"""Scaled dot-product attention and multi-head attention, forward and backward.

    Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V                 (Vaswani et al. 2017, eq. 1)

Functional pairs on tensors split into heads: attention_weights_forward/backward (the weights P)
and sdpa_forward/backward (the whole attention). `MultiHeadAttention` adds the four projections and
runs sdpa's steps with its own `attn_dropout` module between P and P V (which draws, records and
replays that mask like every other Dropout). Shapes: B batch, H heads, Tq query length, Tk key
length, dk = dv = d_model / H head width, D d_model.

Masks are keep-masks (npformer.layers.masks). A query row whose keys are all masked gets weights 0,
output 0 and gradient 0 ("safe softmax", as torch's F.scaled_dot_product_attention), never NaN.
"""
import math
from typing import NamedTuple

import numpy as np

from npformer.layers.dropout import Dropout, dropout_backward, dropout_forward
from npformer.layers.linear import Linear
from npformer.layers.module import Module
from npformer.layers.softmax import SoftmaxCache, softmax_backward, softmax_forward


# -- functional pairs: the weights P = softmax(Q K^T / sqrt(dk)), then the whole attention P V -----
class WeightsCache(NamedTuple):
    q: np.ndarray                 # (B, H, Tq, dk) queries
    k: np.ndarray                 # (B, H, Tk, dk) keys
    weights: np.ndarray           # (B, H, Tq, Tk) P = softmax(S), 0 at masked keys and on empty rows
    scale: float                  # 1 / sqrt(dk)


def attention_weights_forward(q: np.ndarray, k: np.ndarray, keep: np.ndarray | None):
    """P = softmax(Q K^T / sqrt(dk)) over keys, 0 at masked keys and on rows with no key left.
    q (B, H, Tq, dk), k (B, H, Tk, dk), keep: bool broadcastable to (B, H, Tq, Tk) or None."""
    scale = 1.0 / math.sqrt(q.shape[-1])                   # a Python float: float32 stays float32
    scores = (q @ k.swapaxes(-1, -2)) * scale              # (B, H, Tq, Tk)  S = Q K^T / sqrt(dk)
    if keep is not None:
        scores = np.where(keep, scores, -np.inf)           # (B, H, Tq, Tk)  masked keys -> -inf
    weights, _ = softmax_forward(scores, axis=-1)          # (B, H, Tq, Tk)  P; all -inf row -> 0
    return weights, WeightsCache(q, k, weights, scale)


def attention_weights_backward(dweights: np.ndarray, cache: WeightsCache):
    """(dq, dk) from dP (B, H, Tq, Tk).

        P = softmax(S)          dS = P * (dP - rowsum(dP * P))
                                     (softmax Jacobian dP_i/dS_j = P_i (delta_ij - P_j), applied to dP)
        S = Q K^T / sqrt(dk)    dQ = dS K / sqrt(dk),   dK = dS^T Q / sqrt(dk)

    Masked keys have P = 0, so dS = 0 there: no gradient flows through a masked score. A fully masked
    row has P = 0 everywhere, so its dS, and with it its share of dQ and dK, is exactly 0.
    """
    q, k, weights, scale = cache
    dscores = softmax_backward(dweights, SoftmaxCache(weights, -1))   # (B, H, Tq, Tk)  dS
    dq = (dscores @ k) * scale                                        # (B, H, Tq, dk)  dS K / sqrt(dk)
    dk = (dscores.swapaxes(-1, -2) @ q) * scale                       # (B, H, Tk, dk)  dS^T Q / sqrt(dk)
    return dq, dk


class SDPACache(NamedTuple):
    weights: WeightsCache         # q, k, P and the scale
    dropout: object               # dropout_forward's cache (identity when no dropout mask was given)
    dropped: np.ndarray           # (B, H, Tq, Tk) P~ = dropout(P), what multiplied V (P without one)
    v: np.ndarray                 # (B, H, Tk, dv) values


def sdpa_forward(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask=None,
                 dropout_mask: np.ndarray | None = None, dropout_p: float = 0.0):
    """Returns ((out (B, H, Tq, dv), weights P (B, H, Tq, Tk), before dropout), cache); dropout_mask
    is the caller's bool (B, H, Tq, Tk) keep-mask drawn with probability dropout_p, or None.

        S  = Q K^T / sqrt(dk)                 scores, -inf where the mask says "may not attend"
        P  = softmax(S) along keys            a fully masked row is all zeros instead of 0/0 = NaN
        P~ = P * M / (1 - p)                  attention dropout (P~ = P without it)
        O  = P~ V
    """
    weights, wcache = attention_weights_forward(q, k, mask)             # (B, H, Tq, Tk) P
    dropped, dcache = dropout_forward(weights, dropout_p, dropout_mask)  # (B, H, Tq, Tk) P~
    out = dropped @ v                                                   # (B, H, Tq, dv) O = P~ V
    return (out, weights), SDPACache(wcache, dcache, dropped, v)


def sdpa_backward(dout: np.ndarray, cache: SDPACache):
    """(dq, dk, dv) from dout = dL/dO (B, H, Tq, dv), bottom-up through the forward:

        O  = P~ V               dV  = P~^T dO,   dP~ = dO V^T
        P~ = P * M / (1 - p)    dP  = dP~ * M / (1 - p)          (dP = dP~ without dropout)
        P  = softmax(S)         dS  = P * (dP - rowsum(dP * P))
        S  = Q K^T / sqrt(dk)   dQ  = dS K / sqrt(dk),   dK = dS^T Q / sqrt(dk)
    """
    wcache, dcache, dropped, v = cache
    dv = dropped.swapaxes(-1, -2) @ dout                      # (B, H, Tk, dv)  P~^T dO
    ddropped = dout @ v.swapaxes(-1, -2)                      # (B, H, Tq, Tk)  dP~ = dO V^T
    dweights = dropout_backward(ddropped, dcache)             # (B, H, Tq, Tk)  dP = dP~ M / (1 - p)
    dq, dk = attention_weights_backward(dweights, wcache)     # (B, H, Tq, dk), (B, H, Tk, dk)
    return dq, dk, dv


# -- head split / merge (pure reshapes: their backward is the other one) ---------------------------
def split_heads(x: np.ndarray, num_heads: int) -> np.ndarray:
    """(B, T, D) -> (B, H, T, D/H): head h holds features [h*dk, (h+1)*dk) of each position."""
    B, T, D = x.shape
    return x.reshape(B, T, num_heads, D // num_heads).transpose(0, 2, 1, 3)


def merge_heads(x: np.ndarray) -> np.ndarray:
    """(B, H, T, dk) -> (B, T, H*dk), the inverse of split_heads (and its backward)."""
    B, H, T, dk = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, H * dk)


# -- module ----------------------------------------------------------------------------------------
class MHACache(NamedTuple):
    weights: WeightsCache         # q (B, H, Tq, dk), k (B, H, Tk, dk), P (B, H, Tq, Tk), scale
    dropped: np.ndarray           # (B, H, Tq, Tk) P~ = attn_dropout(P)
    v: np.ndarray                 # (B, H, Tk, dk) values, split into heads
    out: np.ndarray               # (B, Tq, D) the forward output (backward checks dout against it)


class MultiHeadAttention(Module):
    """MultiHead(Q, K, V) = Concat(head_1..head_H) W_O, head_i = Attention(Q W_Q_i, K W_K_i, V W_V_i).

    The H per-head projections are one (D, D) Linear each, split into heads by a reshape (no loop).
    forward(query (B, Tq, D), key (B, Tk, D), value (B, Tk, D), mask=None) -> (B, Tq, D) also keeps
    P, before dropout, in `attn_weights` (B, H, Tq, Tk); backward(dout) -> (dquery, dkey, dvalue).

    Incremental decoding (inference only): forward(..., cache=dict) appends this call's keys/values to
    cache["k"], cache["v"] (B, H, Tpast, dk) and attends over all of them; with static_kv=True
    (cross-attention) keys/values are projected from key/value on the first call and reused after
    (key/value may then be None).
    """

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 dtype="float32", rng: np.random.Generator | None = None):
        super().__init__()
        self.d_model = d_model
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.dtype = np.dtype(dtype)
        self.q_proj = Linear(d_model, d_model, bias=bias, dtype=dtype, rng=rng)
        self.k_proj = Linear(d_model, d_model, bias=bias, dtype=dtype, rng=rng)
        self.v_proj = Linear(d_model, d_model, bias=bias, dtype=dtype, rng=rng)
        self.out_proj = Linear(d_model, d_model, bias=bias, dtype=dtype, rng=rng)
        self.attn_dropout = Dropout(dropout)
        self.attn_weights: np.ndarray | None = None

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, num_heads={self.num_heads}, dtype={self.dtype}"

    def forward(self, query: np.ndarray, key: np.ndarray | None, value: np.ndarray | None,
                mask=None, cache: dict | None = None, static_kv: bool = False) -> np.ndarray:
        # ---- projections, split into heads ---------------------------------------------------
        H = self.num_heads
        q = split_heads(self.q_proj.forward(query), H)                 # (B, H, Tq, dk)
        if cache is not None and static_kv and "k" in cache:          # cross-attention, cached:
            k, v = cache["k"], cache["v"]                              # (B, H, Tk, dk) projected before
        else:
            k = split_heads(self.k_proj.forward(key), H)               # (B, H, Tnew, dk)
            v = split_heads(self.v_proj.forward(value), H)             # (B, H, Tnew, dk)
            if cache is not None and not static_kv and "k" in cache:  # self-attention: the past too
                k = np.concatenate([cache["k"], k], axis=2)            # (B, H, Tpast + Tnew, dk)
                v = np.concatenate([cache["v"], v], axis=2)            # (B, H, Tpast + Tnew, dk)
            if cache is not None:
                cache["k"], cache["v"] = k, v

        # ---- attention core, as sdpa_forward, with the attn_dropout module drawing the mask ---
        weights, wcache = attention_weights_forward(q, k, mask)        # (B, H, Tq, Tk) P
        dropped = self.attn_dropout.forward(weights)                   # (B, H, Tq, Tk) P~
        heads = dropped @ v                                            # (B, H, Tq, dk) P~ V
        out = self.out_proj.forward(merge_heads(heads))                # (B, Tq, D)
        self.attn_weights = weights                                    # (B, H, Tq, Tk)

        # an incremental (cached) forward is inference only: no cache for backward
        self._cache = MHACache(wcache, dropped, v, out) if cache is None else None
        self._inference = cache is not None
        return out

    def backward(self, dout: np.ndarray):
        """(dquery (B, Tq, D), dkey (B, Tk, D), dvalue (B, Tk, D)); accumulates parameter grads."""
        wcache, dropped, v, _ = self._require_cache()
        dheads = split_heads(self.out_proj.backward(dout), self.num_heads)  # (B, H, Tq, dk)
        # attention core, as sdpa_backward
        dv = dropped.swapaxes(-1, -2) @ dheads                         # (B, H, Tk, dk) P~^T dO
        ddropped = dheads @ v.swapaxes(-1, -2)                         # (B, H, Tq, Tk) dO V^T
        dweights = self.attn_dropout.backward(ddropped)                # (B, H, Tq, Tk) dP
        dq, dk = attention_weights_backward(dweights, wcache)          # (B,H,Tq,dk), (B,H,Tk,dk)
        dquery = self.q_proj.backward(merge_heads(dq))                 # (B, Tq, D)
        dkey = self.k_proj.backward(merge_heads(dk))                   # (B, Tk, D)
        dvalue = self.v_proj.backward(merge_heads(dv))                 # (B, Tk, D)
        return dquery, dkey, dvalue
