"""Scaled dot-product attention written as tutorials write it (torch functions).

`attention` is correct; every other function is wrong or misbehaves in exactly one way (docstring).
Masks: 0 / False means "hidden" (keep convention) unless said otherwise.
"""
import math
import time

import torch


def attention(query, key, value, mask=None, dropout=None):
    """Correct: softmax(Q K^T / sqrt(d_k)) V, returns (output, weights)."""
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = scores.softmax(dim=-1)
    if dropout is not None:
        weights = dropout(weights)
    return torch.matmul(weights, value), weights


def attention_output_only(q, k, v, mask=None):
    """Correct, returns only the output."""
    scores = q @ k.transpose(-2, -1) * (1.0 / math.sqrt(q.shape[-1]))
    if mask is not None:
        scores = scores.masked_fill(~mask.bool(), float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def attention_drop_mask(q, k, v, attn_mask=None):
    """Correct for masks where True means hidden (nn.MultiheadAttention's sense)."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if attn_mask is not None:
        scores = scores.masked_fill(attn_mask, float("-inf"))
    w = torch.softmax(scores, dim=-1)
    return w @ v, w


def attention_safe(q, k, v, mask=None):
    """Correct including fully masked rows (zeros there, like F.scaled_dot_product_attention)."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    w = torch.softmax(scores, dim=-1)
    w = torch.nan_to_num(w, nan=0.0)
    return w @ v, w


def attention_wrong_scale(query, key, value, mask=None):
    """BUG: divides by d_k instead of sqrt(d_k)."""
    scores = torch.matmul(query, key.transpose(-2, -1)) / query.size(-1)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    w = scores.softmax(dim=-1)
    return w @ value, w


def attention_softmax_wrong_axis(query, key, value, mask=None):
    """BUG: softmax over the queries (dim=-2) instead of the keys."""
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    w = scores.softmax(dim=-2)
    return w @ value, w


def attention_mask_ignored(query, key, value, mask=None):
    """BUG: takes a mask and never uses it."""
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(query.size(-1))
    w = scores.softmax(dim=-1)
    return w @ value, w


def attention_mask_inverted(query, key, value, mask=None):
    """BUG: hides the keys the mask keeps (reads 1 as hidden)."""
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 1, -1e9)
    w = scores.softmax(dim=-1)
    return w @ value, w


def attention_raises(query, key, value, mask=None):
    """Misbehaves: raises."""
    raise NotImplementedError("TODO: implement attention")


def attention_nan(query, key, value, mask=None):
    """Misbehaves: a 0/0 in the normalisation gives NaN everywhere."""
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    e = torch.exp(scores) * 0.0
    w = e / e.sum(dim=-1, keepdim=True)
    return w @ value, w


def attention_wrong_shape(query, key, value, mask=None):
    """Misbehaves: returns the heads already merged, (B, Tq, H * dv) instead of (B, H, Tq, dv)."""
    out, w = attention(query, key, value, mask)
    B, H, Tq, dv = out.shape
    return out.transpose(1, 2).reshape(B, Tq, H * dv), w


def attention_mutates(query, key, value, mask=None):
    """Misbehaves: scales the caller's query tensor in place (the output itself is right)."""
    query.mul_(1.0 / math.sqrt(query.size(-1)))
    scores = query @ key.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    w = scores.softmax(dim=-1)
    return w @ value, w


def attention_hangs(query, key, value, mask=None):
    """Misbehaves: never returns."""
    while True:
        time.sleep(0.01)


def attention_returns_list(query, key, value, mask=None):
    """Misbehaves: returns a Python string."""
    return "attention output"


def attention_detached(query, key, value, mask=None):
    """BUG (backward only): the scores are detached, so no gradient reaches the queries and keys;
    the output and the weights are right."""
    scores = (query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))).detach()
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    w = scores.softmax(dim=-1)
    return w @ value, w
