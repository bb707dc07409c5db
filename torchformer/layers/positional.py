"""Positional encodings added to the embeddings (twin of npformer.layers.positional).

Sinusoidal (the paper, section 3.5), a fixed table, not a parameter:
    PE[pos, 2i]   = sin(pos / 10000^(2i / D))
    PE[pos, 2i+1] = cos(pos / 10000^(2i / D))
Learned (GPT-2): a parameter `weight` (max_len, D), initialised normal, mean 0, std 0.02.

forward(x (B, T, D), offset=0) -> x + table[offset:offset + T]; `offset` is the number of positions
already decoded (incremental decoding).
"""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

from torchformer.layers.linear import draw_normal
from torchformer.layers.module import Module, to_torch_dtype


def sinusoidal_table(max_len: int, d_model: int, dtype="float32", device=None) -> torch.Tensor:
    """(max_len, d_model) table of the paper's sinusoids, computed in float64 then cast."""
    pos = np.arange(max_len, dtype=np.float64)[:, None]                     # (L, 1)
    two_i = np.arange(0, d_model, 2, dtype=np.float64)                      # (ceil(D/2),)
    angle = pos / np.power(10000.0, two_i / d_model)                        # (L, ceil(D/2))
    pe = np.zeros((max_len, d_model), dtype=np.float64)                     # (L, D)
    pe[:, 0::2] = np.sin(angle)                                             # even columns
    pe[:, 1::2] = np.cos(angle[:, : d_model // 2])                          # odd columns
    return torch.from_numpy(pe).to(dtype=to_torch_dtype(dtype), device=device)


class SinusoidalPositionalEncoding(Module):
    """x + pe[offset:offset+T]; the table `pe` (max_len, D) is a non-persistent buffer (not in
    state_dict, as npformer keeps it out of its parameters)."""

    def __init__(self, d_model: int, max_len: int = 512, dtype="float32", device=None):
        super().__init__()
        self.d_model = d_model
        self.max_len = max_len
        self.dtype = to_torch_dtype(dtype)
        self.register_buffer("pe", sinusoidal_table(max_len, d_model, self.dtype, device),
                             persistent=False)

    def forward(self, x: torch.Tensor, offset: int = 0) -> torch.Tensor:
        T = x.shape[1]
        return x + self.pe[offset:offset + T]                                # (B, T, D)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, max_len={self.max_len}"


class LearnedPositionalEncoding(Module):
    """x + weight[offset:offset+T] with a learned weight (max_len, D)."""

    def __init__(self, d_model: int, max_len: int = 512, dtype="float32", rng=None,
                 device=None):
        super().__init__()
        self.d_model = d_model
        self.max_len = max_len
        self.dtype = to_torch_dtype(dtype)
        self.weight = nn.Parameter(draw_normal((max_len, d_model), 0.02, rng, self.dtype, device))

    def forward(self, x: torch.Tensor, offset: int = 0) -> torch.Tensor:
        T = x.shape[1]
        return x + self.weight[offset:offset + T]                            # (B, T, D)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, max_len={self.max_len}"


def make_positional(config, rng=None, device=None) -> nn.Module:
    """The positional module config.positional asks for ("sinusoidal" or "learned")."""
    if config.positional == "sinusoidal":
        return SinusoidalPositionalEncoding(config.d_model, config.max_len, config.dtype, device)
    if config.positional == "learned":
        return LearnedPositionalEncoding(config.d_model, config.max_len, config.dtype, rng, device)
    raise ValueError(f"config.positional: expected 'sinusoidal' or 'learned', got "
                     f"{config.positional!r}")  # pragma: no cover - the config validates it
