"""Scaled dot-product attention and multi-head attention (twin of npformer.layers.attention).

    Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V                 (Vaswani et al. 2017, eq. 1)

Two paths compute the same function:

- explicit (`sdpa_explicit`): matmul, masked safe softmax, optional dropout mask, matmul; it
  returns the per-head weights (B, H, Tq, Tk). MultiHeadAttention takes it when `need_weights` is True,
  when a dropout mask was queued on its `attn_dropout` (replay), or when that dropout is active and
  records its masks (`set_record_masks`).
- fast (`sdpa_fast`): `F.scaled_dot_product_attention` with a boolean attn_mask (True = attend) and,
  in training, its own `dropout_p` (not recorded, not replayable).

Masks are keep-masks broadcastable to (B, H, Tq, Tk). A query row whose keys are all masked gives
weights 0, output 0 and gradient 0 on both paths, whatever the backend: before the softmax (or SDPA)
such a row is unmasked (so no kernel ever sees an all -inf row, which some turn into NaN), and the
result of the row is zeroed afterwards; a zeroed row passes no gradient back.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from torchformer.layers.dropout import Dropout, dropout_apply
from torchformer.layers.linear import Linear
from torchformer.layers.module import Module, compiling, to_torch_dtype

# ------------------------------------------------------------------------------------------------
# functional cores
# ------------------------------------------------------------------------------------------------
_MEMO = "_torchformer_rows"     # tensor attribute: (mask._version, keeps everything?) when no row is empty


def _empty_rows(mask: torch.Tensor | None):
    """(keep_eff, row_any): the mask with fully masked rows opened up (None: attend everywhere),
    and which rows had a key; row_any is None when nothing needs zeroing afterwards.

    On the CPU (eager) two tiny reductions over the mask answer "is any row empty?" and "does it
    mask anything at all?". When no row is empty (the usual case: padding masks of real batches)
    the caller skips the zeroing, a full pass over the output; when nothing is masked (a batch
    without padding) the mask is dropped, and the attention runs unmasked. The answer is noted on
    the mask tensor with its version counter, so the other layers of the model, which get the same
    mask object, skip the reductions too (an in-place change of the mask bumps the version and the
    questions are asked again; inference tensors have no version and are not noted).

    On an accelerator the answers would need a device sync, dearer than the work they save, and
    under torch.compile reading them (bool(t)) would break the graph: rows are always handled there.
    """
    if mask is None:
        return None, None
    if mask.device.type != "cpu" or compiling():
        row_any = mask.any(dim=-1, keepdim=True)           # (B|1, H|1, Tq|1, 1) row has a key
        return mask | ~row_any, row_any                     # (B|1, H|1, Tq|1, Tk|1)
    memo = not mask.is_inference()
    if memo:
        noted = getattr(mask, _MEMO, None)
        if noted is not None and noted[0] == mask._version:
            return (None if noted[1] else mask), None      # known: no empty row
    row_any = mask.any(dim=-1, keepdim=True)               # (B|1, H|1, Tq|1, 1) row has a key
    if not bool(row_any.all()):
        return mask | ~row_any, row_any                     # (B|1, H|1, Tq|1, Tk|1)
    keeps_all = bool(mask.all())
    if memo:
        setattr(mask, _MEMO, (mask._version, keeps_all))
    return (None if keeps_all else mask), None              # no empty row: nothing to zero




def sdpa_explicit(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask=None,
                  dropout_mask: torch.Tensor | None = None, dropout_p: float = 0.0):
    """Explicit attention: ((out (B, H, Tq, dv), weights (B, H, Tq, Tk)), weights before dropout.

    mask: bool keep-mask broadcastable to (B, H, Tq, Tk) or None (already checked by the caller).
    dropout_mask: bool (B, H, Tq, Tk) or None; kept weights are scaled by 1 / (1 - dropout_p).
    """
    keep_eff, row_any = _empty_rows(mask)
    scale = 1.0 / math.sqrt(q.shape[-1])
    scores = torch.matmul(q, k.transpose(-2, -1)) * scale          # (B, H, Tq, Tk) S = QK^T/sqrt(dk)
    if keep_eff is not None:
        scores = scores.masked_fill(~keep_eff, float("-inf"))      # masked keys -> -inf
    weights = torch.softmax(scores, dim=-1)                        # (B, H, Tq, Tk) P
    if row_any is not None:
        weights = weights.masked_fill(~row_any, 0.0)               # empty rows -> 0 (no gradient)
    dropped = weights
    if dropout_mask is not None and dropout_p > 0.0:
        dropped = dropout_apply(weights, dropout_mask, dropout_p)  # (B, H, Tq, Tk) P * M / (1 - p)
    out = torch.matmul(dropped.to(v.dtype), v)                     # (B, H, Tq, dv) O = P~ V
    return out, weights


def sdpa_fast(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask=None,
              dropout_p: float = 0.0) -> torch.Tensor:
    """F.scaled_dot_product_attention with a keep-mask; fully masked rows give exactly 0.

    dropout_p is applied as given (SDPA drops even in eval: the caller passes 0 outside training).
    """
    keep_eff, row_any = _empty_rows(mask)
    if keep_eff is not None and keep_eff.shape[-1] != k.shape[-2]:
        # a mask broadcast over the keys (a (1, 1, 1, 1) "attend" at a cached decoding step): CUDA's
        # memory-efficient kernel refuses a bias whose key axis has stride 0, so write it out
        keep_eff = keep_eff.expand(*keep_eff.shape[:-1], k.shape[-2]).contiguous()  # (.., Tq|1, Tk)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=keep_eff, dropout_p=dropout_p)
    if row_any is not None:
        out = out.masked_fill(~row_any, 0.0)                       # (B, H, Tq, dv)
    return out


def scaled_dot_product_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask=None,
                                 dropout_mask=None, dropout_p: float = 0.0, need_weights=True):
    """The twin of npformer's sdpa_forward (without its cache): (out (B, H, Tq, dv), weights
    (B, H, Tq, Tk) or None). mask: a bool keep-mask tensor broadcastable to (B, H, Tq, Tk) or None;
    dropout_mask: a bool (B, H, Tq, Tk) tensor or None. `torchformer.scaled_dot_product_attention` is
    this function with its arguments checked (torchformer.guards.functional); this one checks nothing.

    need_weights=True (default) or a dropout_mask: explicit path; otherwise SDPA (weights None, and
    no dropout: there is no mask to apply).
    """
    if need_weights or dropout_mask is not None:
        return sdpa_explicit(q, k, v, mask, dropout_mask, dropout_p)
    return sdpa_fast(q, k, v, mask), None


# ------------------------------------------------------------------------------------------------
# head split / merge
# ------------------------------------------------------------------------------------------------
def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """(B, T, D) -> (B, H, T, D/H): head h holds features [h*dk, (h+1)*dk) of each position."""
    B, T, D = x.shape
    return x.reshape(B, T, num_heads, D // num_heads).transpose(1, 2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(B, H, T, dk) -> (B, T, H*dk), the inverse of split_heads."""
    B, H, T, dk = x.shape
    return x.transpose(1, 2).reshape(B, T, H * dk)


# ------------------------------------------------------------------------------------------------
# module
# ------------------------------------------------------------------------------------------------
class MultiHeadAttention(Module):
    """MultiHead(Q, K, V) = Concat(head_1..head_H) W_O, head_i = Attention(Q W_Q_i, K W_K_i, V W_V_i).

    Args: d_model D (divisible by num_heads H), num_heads, dropout (on the attention probabilities,
    module `attn_dropout`), bias, dtype, rng (initialisation), device; need_weights (attribute too).
    Children: q_proj, k_proj, v_proj, out_proj (Linear D -> D), attn_dropout (Dropout).

    forward(query (B, Tq, D), key (B, Tk, D), value (B, Tk, D), mask=None, cache=None,
    static_kv=False) -> (B, Tq, D). `attn_weights` holds the per-head probabilities before dropout
    (B, H, Tq, Tk) after an explicit-path forward, None after a fast one.

    Incremental decoding: with a `cache` dict, self-attention appends this call's keys/values to
    cache["k"], cache["v"] (B, H, Tpast, dk) and attends over all of them; with static_kv=True
    (cross-attention) keys/values are projected on the first call and reused after (key/value may
    then be None). The mask then covers (Tq, Tpast + Tnew).
    """

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 dtype="float32", rng=None, device=None, need_weights: bool = False):
        super().__init__()
        self.d_model = d_model
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.dtype = to_torch_dtype(dtype)
        self.q_proj = Linear(d_model, d_model, bias=bias, dtype=dtype, rng=rng, device=device)
        self.k_proj = Linear(d_model, d_model, bias=bias, dtype=dtype, rng=rng, device=device)
        self.v_proj = Linear(d_model, d_model, bias=bias, dtype=dtype, rng=rng, device=device)
        self.out_proj = Linear(d_model, d_model, bias=bias, dtype=dtype, rng=rng, device=device)
        self.attn_dropout = Dropout(dropout)
        self.need_weights = bool(need_weights)
        self.attn_weights: torch.Tensor | None = None

    def extra_repr(self) -> str:
        return (f"d_model={self.d_model}, num_heads={self.num_heads}, "
                f"need_weights={self.need_weights}")

    def forward(self, query: torch.Tensor, key: torch.Tensor | None, value: torch.Tensor | None,
                mask=None, cache: dict | None = None, static_kv: bool = False) -> torch.Tensor:
        """mask: a bool keep-mask on query's device, or None (the call's guard converts it)."""
        B, Tq, _ = query.shape
        H = self.num_heads
        reuse_kv = cache is not None and static_kv and "k" in cache
        past = 0 if cache is None or static_kv or "k" not in cache else cache["k"].shape[2]

        # ---- projections, split into heads ---------------------------------------------------
        q = split_heads(self.q_proj(query), H)                         # (B, H, Tq, dk)
        if reuse_kv:
            k, v = cache["k"], cache["v"]                              # (B, H, Tk, dk)
        else:
            k = split_heads(self.k_proj(key), H)                       # (B, H, Tnew, dk)
            v = split_heads(self.v_proj(value), H)                     # (B, H, Tnew, dk)
            if past:
                k = torch.cat([cache["k"].to(k.dtype), k], dim=2)      # (B, H, Tpast + Tnew, dk)
                v = torch.cat([cache["v"].to(v.dtype), v], dim=2)      # (B, H, Tpast + Tnew, dk)
            if cache is not None:
                cache["k"], cache["v"] = k, v
        Tk = k.shape[2]

        # ---- attention core ------------------------------------------------------------------
        drop = self.attn_dropout
        if self.need_weights or drop.replay_pending or (drop.active and drop.records):
            dmask = drop.draw_mask((B, H, Tq, Tk), query.device)       # None when inactive
            heads, weights = sdpa_explicit(q, k, v, mask, dmask, drop.p)
            self.attn_weights = weights                                # (B, H, Tq, Tk)
        else:
            drop.mark_unrecorded()                                          # SDPA drops, unrecorded
            heads = sdpa_fast(q, k, v, mask, drop.p if drop.active else 0.0)
            if self.attn_weights is not None:                          # (a module setattr is dear)
                self.attn_weights = None
        return self.out_proj(merge_heads(heads))                       # (B, Tq, D)


def set_need_weights(model: nn.Module, flag: bool = True) -> nn.Module:
    """Set `need_weights` on every MultiHeadAttention in `model` (True: explicit path, weights kept)."""
    for m in model.modules():
        if isinstance(m, MultiHeadAttention):
            m.need_weights = bool(flag)
    return model
