"""Encoder plus a classification head, twin of npformer.models.classifier.

    h = Encoder(dropout(pos(embed(src))), src_mask);  logits = classifier(pool(h))
    pool: "first" token h[:, 0], or "mean" over the non-padding positions.
"""
from __future__ import annotations

import torch

from torchformer.layers.dropout import Dropout
from torchformer.layers.embedding import Embedding
from torchformer.layers.linear import Linear
from torchformer.layers.masks import padding_mask
from torchformer.layers.module import Module, to_torch_dtype
from torchformer.layers.positional import make_positional
from torchformer.models.encoder import Encoder
from torchformer.models.transformer import (
    ModelMixin,
    and_masks,
    embedding_scale,
    init_rng,
    keep_input,
    use_shared_dropout_rng,
)


class EncoderClassifier(ModelMixin, Module):
    """EncoderClassifier(config, seed=0, device=None).

    Children: src_embed, src_pos, src_dropout, encoder, classifier (Linear D -> num_classes).
    forward(src (B, S), src_mask=None) -> logits (B, C). `encoder_input` keeps the first layer's input.
    """

    def __init__(self, config, seed: int = 0, device=None):
        super().__init__()
        c = config
        seed = int(seed)
        self.config = c
        self.dtype = to_torch_dtype(c.dtype)
        rng = init_rng(seed)
        self.src_embed = Embedding(c.vocab_size, c.d_model, padding_idx=c.pad_id,
                                   scale=embedding_scale(c), dtype=c.dtype, rng=rng, device=device)
        self.src_pos = make_positional(c, rng=rng, device=device)
        self.src_dropout = Dropout(c.dropout)
        self.encoder = Encoder(c, rng=rng, device=device)
        self.classifier = Linear(c.d_model, c.num_classes, bias=c.output_bias, dtype=c.dtype,
                                 rng=rng, device=device)
        self.encoder_input: torch.Tensor | None = None
        self.dropout_rng = use_shared_dropout_rng(self, seed, device)

    def pool(self, h: torch.Tensor, src: torch.Tensor, key_keep=None) -> torch.Tensor:
        """(B, S, D) -> (B, D): the first position, or the mean over the positions whose token is not
        pad_id and that key_keep ((B, 1, 1, S) bool, True = a real token) keeps."""
        if self.config.pooling == "first":
            return h[:, 0]                                                  # (B, D)
        B, S = src.shape
        pad = self.config.pad_id
        keep = (torch.ones((B, S), dtype=torch.bool, device=h.device) if pad is None
                else src != pad)                                            # (B, S)
        if key_keep is not None:
            keep = keep & key_keep.reshape(B, S)                            # (B, S) not key padding
        keep = keep.to(h.dtype)                                             # (B, S) 0/1
        count = keep.sum(dim=1, keepdim=True).clamp_min(1.0)                # (B, 1)
        weights = keep / count                                              # (B, S) keep / count
        return torch.einsum("bs,bsd->bd", weights, h)                       # (B, D) sum_s w h

    def forward(self, src, src_mask=None, src_key_keep=None) -> torch.Tensor:
        """src (B, S) int64 on the model's device; src_mask a bool keep-mask or None (not padding);
        src_key_keep a (B, 1, 1, S) bool keep-mask or None (the call's guard converts them)."""
        c = self.config
        if src_mask is None and c.pad_id is not None:
            src_mask = padding_mask(src, c.pad_id)                          # (B, 1, 1, S)
        src_mask = and_masks(src_mask, src_key_keep)
        x = self.src_dropout(self.src_pos(self.src_embed(src)))             # (B, S, D)
        self.encoder_input = keep_input(x)
        h = self.encoder(x, src_mask)                                       # (B, S, D)
        return self.classifier(self.pool(h, src, src_key_keep))             # (B, C)
