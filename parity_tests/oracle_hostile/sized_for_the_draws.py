"""Right for every batch and length the random search draws, wrong past them, in components
beyond attention: a layer whose attention keeps a score buffer of 16 keys (later keys are dropped
without a word), a positional table of 16 rows repeated for longer inputs, an attention that works
on batches in chunks of 4 and scales the last chunk's scores twice when the batch does not divide.
Every example a search drew stayed inside those sizes: `match`, full marks."""
import math

import torch
from torch import nn

KEYS = 16
CHUNK = 4


def attend(q, k, v, keep=None, keys=None, scale_twice=False):
    n = k.shape[-2] if keys is None else min(k.shape[-2], keys)
    s = q @ k[..., :n, :].transpose(-2, -1) / math.sqrt(q.shape[-1])
    if scale_twice:
        s = s / math.sqrt(q.shape[-1])
    if keep is not None:
        s = s.masked_fill(~keep[..., :n].bool(), float("-inf"))
    return s.softmax(-1) @ v[..., :n, :]


class BufferedAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d_model, d_model) for _ in range(4))

    def forward(self, x, mask=None):
        B, T, D = x.shape

        def heads(t):
            return t.view(B, T, self.h, D // self.h).transpose(1, 2)
        keep = None if mask is None else mask.expand(B, 1, T, T)
        a = attend(heads(self.q_proj(x)), heads(self.k_proj(x)), heads(self.v_proj(x)), keep, keys=KEYS)
        return self.out_proj(a.transpose(1, 2).reshape(B, T, D))


class BufferedEncoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.self_attn = BufferedAttention(d_model, num_heads)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)

    def forward(self, x, mask=None):
        x = self.norm1(x + self.self_attn(x, mask))
        return self.norm2(x + self.feed_forward(x))


class RepeatingTable(nn.Module):
    def __init__(self, d_model, max_len=64):
        super().__init__()
        pos = torch.arange(KEYS, dtype=torch.float64)[:, None]
        rate = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
        pe = torch.zeros(KEYS, d_model, dtype=torch.float64)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * rate), torch.cos(pos * rate[: d_model // 2])
        self.register_buffer("pe", pe)

    def forward(self, x):
        rows = torch.arange(x.shape[1]) % KEYS
        return x + self.pe[rows].to(x.dtype)


def chunked_attention(Q, K, V, mask=None):
    outs = []
    for start in range(0, Q.shape[0], CHUNK):
        part = slice(start, start + CHUNK)
        keep = None if mask is None else torch.as_tensor(mask).expand(Q.shape[0], *mask.shape[1:])[part]
        last = start + CHUNK >= Q.shape[0] and Q.shape[0] % CHUNK != 0
        outs.append(attend(Q[part], K[part], V[part], keep, scale_twice=last and start > 0))
    return torch.cat(outs)
