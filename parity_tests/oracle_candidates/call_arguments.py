"""Right code taking forward arguments F.scaled_dot_product_attention takes (`is_causal`, `scale`,
`dropout_p`): its own arithmetic honouring each (`attention`), and the library function itself
behind the same signature (`library_attention`). Both match: `is_causal` is also called True
against a causal reference; `scale` and `dropout_p` are named in the report as not checked."""
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


def library_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    """The library's own function behind the same signature."""
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask,
                                                            dropout_p=dropout_p,
                                                            is_causal=is_causal, scale=scale)
