"""Token embedding: out = W[ids] * scale (twin of npformer.layers.embedding).

The row `padding_idx` gets no gradient (F.embedding's padding_idx), as in npformer's backward.
Initialisation as npformer: normal, mean 0, std embedding_dim^-0.5, padding row zero.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from torchformer.layers.linear import draw_normal
from torchformer.layers.module import Module, to_torch_dtype


class Embedding(Module):
    """Lookup table weight (V, D); forward(ids (...) int) -> (..., D) = weight[ids] * scale."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 scale: float = 1.0, dtype="float32", rng=None, device=None):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = padding_idx
        self.scale = float(scale)
        self.dtype = to_torch_dtype(dtype)
        w = draw_normal((num_embeddings, embedding_dim), embedding_dim ** -0.5, rng, self.dtype,
                        device)
        if padding_idx is not None:
            w[padding_idx] = 0.0                                            # as torch.nn.Embedding
        self.weight = nn.Parameter(w)

    def forward(self, ids) -> torch.Tensor:
        out = F.embedding(ids, self.weight, padding_idx=self.padding_idx)   # (..., D)
        return out * self.scale if self.scale != 1.0 else out                # (..., D)

    def extra_repr(self) -> str:
        return (f"{self.num_embeddings}, {self.embedding_dim}, padding_idx={self.padding_idx}, "
                f"scale={self.scale:g}")
