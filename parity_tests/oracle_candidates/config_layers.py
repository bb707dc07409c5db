"""Post-norm encoder layers built from a config object whose width names are shared between
hyperparameters or are library-specific: `dim` beside `hidden_dim` (the feed-forward width here,
as DistilBERT names it) with LayerNorms fixed at eps 1e-12, and a config class named beside the
layer whose head count and feed-forward width are `encoder_attention_heads` / `encoder_ffn_dim`
(as BART and Whisper name them). Correct versions and twins whose docstring says BUG."""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class NarrowEpsConfig:
    dim: int = 768
    hidden_dim: int = 3072
    n_heads: int = 12
    dropout: float = 0.1


class _Attention(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads, self.head_width = heads, width // heads
        self.q_lin = nn.Linear(width, width)
        self.k_lin = nn.Linear(width, width)
        self.v_lin = nn.Linear(width, width)
        self.out_lin = nn.Linear(width, width)

    def forward(self, x, mask=None):
        b, t, _ = x.shape

        def heads(z):
            return z.view(b, t, self.heads, self.head_width).transpose(1, 2)
        q, k, v = heads(self.q_lin(x)), heads(self.k_lin(x)), heads(self.v_lin(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_width)
        if mask is not None:
            keep = mask if mask.dim() == 4 else mask.unsqueeze(1)
            scores = scores.masked_fill(keep == 0, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return self.out_lin((weights @ v).transpose(1, 2).reshape(b, t, -1))


class TinyEpsPostNormLayer(nn.Module):
    """Correct post-norm encoder layer; its LayerNorms use eps 1e-12 whatever the config says."""

    residual_in_ffn_norm = True

    def __init__(self, config: NarrowEpsConfig):
        super().__init__()
        self.attention = _Attention(config.dim, config.n_heads)
        self.sa_norm = nn.LayerNorm(config.dim, eps=1e-12)
        self.lin1 = nn.Linear(config.dim, config.hidden_dim)
        self.lin2 = nn.Linear(config.hidden_dim, config.dim)
        self.out_norm = nn.LayerNorm(config.dim, eps=1e-12)

    def forward(self, x, mask=None):
        h = self.sa_norm(x + self.attention(x, mask))
        f = self.lin2(torch.relu(self.lin1(h)))
        return self.out_norm(h + f if self.residual_in_ffn_norm else f)


class TinyEpsPostNormLayerNoResidual(TinyEpsPostNormLayer):
    """BUG: the second LayerNorm gets the feed-forward output without the residual."""

    residual_in_ffn_norm = False


class WideLayerConfig:
    """A config with library-specific names and library-sized defaults (built, then set)."""

    def __init__(self):
        self.d_model = 1024
        self.encoder_attention_heads = 16
        self.encoder_ffn_dim = 4096
        self.dropout = 0.1


class WideLayer(nn.Module):
    """Correct post-norm encoder layer reading encoder_attention_heads / encoder_ffn_dim."""

    scale = True

    def __init__(self, config=None):
        super().__init__()
        self.attention = _Attention(config.d_model, config.encoder_attention_heads)
        self.self_attn_layer_norm = nn.LayerNorm(config.d_model)
        self.fc1 = nn.Linear(config.d_model, config.encoder_ffn_dim)
        self.fc2 = nn.Linear(config.encoder_ffn_dim, config.d_model)
        self.final_layer_norm = nn.LayerNorm(config.d_model)

    def forward(self, hidden_states, attention_mask=None):
        h = self.self_attn_layer_norm(hidden_states + self.attention(hidden_states, attention_mask))
        f = self.fc2(torch.relu(self.fc1(h)))
        return self.final_layer_norm(h + (f if self.scale else 0.5 * f))


class WideLayerHalfFfn(WideLayer):
    """BUG: the feed-forward output is halved before the residual."""

    scale = False
