"""Forward arguments the oracle never varied, taken and ignored. An attention function whose
signature is F.scaled_dot_product_attention's (`is_causal`, `scale`, `dropout_p`) and an attention
module taking `key_padding_mask`, `need_weights` and `**kwargs`: each computes plain attention
whatever those say (never causal, always 1/sqrt(d_k), no dropout, no padding). Right at the values a
check passed (is_causal False, dropout_p 0, the rest at their defaults), so both matched. The
function's is_causal is now called True against a causal reference (a mismatch); the other
arguments are named in the report as not checked."""
import math

import torch
import torch.nn as nn


def attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])       # scale and is_causal ignored
    if attn_mask is not None:
        s = s.masked_fill(~attn_mask, float("-inf")) if attn_mask.dtype == torch.bool else s + attn_mask
    return torch.softmax(s, dim=-1) @ v                          # dropout_p ignored


class Attention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h, self.d_k = num_heads, d_model // num_heads
        self.W_q, self.W_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.W_v, self.W_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None, key_padding_mask=None, need_weights=False,
                **kwargs):
        B, Tq, D = query.shape
        q = self.W_q(query).view(B, Tq, self.h, self.d_k).transpose(1, 2)
        k = self.W_k(key).view(B, -1, self.h, self.d_k).transpose(1, 2)
        v = self.W_v(value).view(B, -1, self.h, self.d_k).transpose(1, 2)
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            s = s.masked_fill(mask == 0, -1e9)
        return self.W_o((torch.softmax(s, dim=-1) @ v).transpose(1, 2).reshape(B, Tq, D))
