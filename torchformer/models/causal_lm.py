"""Decoder-only language model (GPT-style), twin of npformer.models.causal_lm.

    logits = output_proj(Decoder(dropout(pos(embed(ids))), self_mask=causal AND not-padding))
"""
from __future__ import annotations

import torch

from torchformer.layers.dropout import Dropout
from torchformer.layers.embedding import Embedding
from torchformer.layers.linear import Linear
from torchformer.layers.module import Module, to_torch_dtype
from torchformer.layers.positional import make_positional
from torchformer.models.decoder import Decoder
from torchformer.models.transformer import (
    ModelMixin,
    and_masks,
    embedding_scale,
    init_rng,
    keep_input,
    target_self_mask,
    use_shared_dropout_rng,
)


class CausalLM(ModelMixin, Module):
    """CausalLM(config, seed=0, device=None).

    Children: tgt_embed, tgt_pos, tgt_dropout, decoder (Decoder without cross-attention),
    output_proj (Linear D -> V; its weight is tgt_embed.weight when config.tie_embeddings).

    forward(ids (B, T), mask=None, caches=None, offset=0) -> logits (B, T, V). Default mask: causal
    AND key not padding (B, 1, T, offset + T). With caches ([{} ...], one per layer) ids hold only the
    new tokens at positions offset.. offset + T - 1. `decoder_input` keeps the first layer's input.
    """

    _anchor = "tgt_embed"

    def __init__(self, config, seed: int = 0, device=None):
        super().__init__()
        c = config
        seed = int(seed)
        self.config = c
        self.dtype = to_torch_dtype(c.dtype)
        rng = init_rng(seed)
        self.tgt_embed = Embedding(c.vocab_size, c.d_model, padding_idx=c.pad_id,
                                   scale=embedding_scale(c), dtype=c.dtype, rng=rng, device=device)
        self.tgt_pos = make_positional(c, rng=rng, device=device)
        self.tgt_dropout = Dropout(c.dropout)
        self.decoder = Decoder(c, cross_attention=False, rng=rng, device=device)
        self.output_proj = Linear(c.d_model, c.vocab_size, bias=c.output_bias, dtype=c.dtype,
                                  rng=rng, device=device)
        if c.tie_embeddings:
            self.output_proj.weight = self.tgt_embed.weight             # (V, D), shared
        self.decoder_input: torch.Tensor | None = None
        self.dropout_rng = use_shared_dropout_rng(self, seed, device)

    def forward(self, ids, mask=None, caches: list | None = None, offset: int = 0,
                key_keep=None) -> torch.Tensor:
        """ids (B, T) int64 on the model's device; mask a bool keep-mask or None (causal and not
        padding); key_keep a (B, 1, 1, past + T) bool keep-mask or None, past the keys the caches
        hold (the call's guard converts the arguments)."""
        c = self.config
        if mask is None:
            mask = target_self_mask(ids, c.pad_id, offset, caches)      # (B, 1, T, past + T)
        mask = and_masks(mask, key_keep)
        x = self.tgt_dropout(self.tgt_pos(self.tgt_embed(ids), offset=offset))  # (B, T, D)
        self.decoder_input = keep_input(x)
        h = self.decoder(x, None, mask, None, caches=caches)            # (B, T, D)
        return self.output_proj(h)                                      # (B, T, V)
