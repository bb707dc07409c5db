"""minGPT / nanoGPT-like modules written for the oracle's reach tests.

A config dataclass with n_embd / n_head / block_size / dropout / bias fields; attention with one fused
c_attn Linear(d, 3d) and a registered causal `bias` buffer; an MLP of width 4 * n_embd.
Correct unless a docstring says BUG."""
import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class GPTConfig:
    block_size: int = 64
    vocab_size: int = 100
    n_layer: int = 2
    n_head: int = 2
    n_embd: int = 16
    dropout: float = 0.1
    bias: bool = True


class CausalSelfAttention(nn.Module):
    """Causal self-attention: forward(x) only, the causal mask is a buffer."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head, self.n_embd = config.n_head, config.n_embd
        tril = torch.tril(torch.ones(config.block_size, config.block_size))
        self.register_buffer("bias", tril.view(1, 1, config.block_size, config.block_size))

    def scale(self, hs):
        return 1.0 / math.sqrt(hs)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        hs = C // self.n_head
        q = q.view(B, T, self.n_head, hs).transpose(1, 2)            # (B, nh, T, hs)
        k = k.view(B, T, self.n_head, hs).transpose(1, 2)
        v = v.view(B, T, self.n_head, hs).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * self.scale(hs)
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = self.attn_dropout(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class CausalSelfAttentionBadScale(CausalSelfAttention):
    """BUG: scales the scores by 1/sqrt(n_embd) instead of 1/sqrt(head size)."""

    def scale(self, hs):
        return 1.0 / math.sqrt(self.n_embd)


class FlashCausalSelfAttention(CausalSelfAttention):
    """nanoGPT's flash path: F.scaled_dot_product_attention(..., is_causal=True), no buffer."""

    def __init__(self, config: GPTConfig):
        super().__init__(config)
        del self.bias

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=True)
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


class MLP(nn.Module):
    """nanoGPT MLP: width 4 * n_embd fixed by the code, exact GELU."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class MLPTanh(MLP):
    """BUG (for an exact-GELU reference): minGPT's tanh approximation of GELU."""

    def __init__(self, config: GPTConfig):
        super().__init__(config)
        self.gelu = nn.GELU(approximate="tanh")


class LayerNorm(nn.Module):
    """nanoGPT LayerNorm with an optional bias (F.layer_norm)."""

    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


class LayerNormBadEps(LayerNorm):
    """BUG: eps 1e-6 hard-coded."""

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-6)


class Block(nn.Module):
    """nanoGPT block: pre-norm, causal self-attention, GELU MLP of width 4 * n_embd."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class BlockSharedNorm(Block):
    """BUG: ln_1 used before the MLP too."""

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_1(x))
