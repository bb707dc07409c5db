"""Right code taking forward arguments the oracle does not vary: an attention function with
F.scaled_dot_product_attention's signature that honours every argument (`is_causal`, `scale`,
`dropout_p`). It matches; the report names those arguments as not checked (they were never given
another value), without failing anything."""
import math

import torch


def attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    s = q @ k.transpose(-2, -1) * (1 / math.sqrt(q.shape[-1]) if scale is None else scale)
    if is_causal:
        keep = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).tril()
        s = s.masked_fill(~keep, float("-inf"))
    if attn_mask is not None:
        s = s.masked_fill(~attn_mask, float("-inf")) if attn_mask.dtype == torch.bool else s + attn_mask
    p = torch.softmax(s, dim=-1)
    return torch.nn.functional.dropout(p, dropout_p) @ v
