"""BERT: encoder-only Transformer with segment embeddings, pooler and two heads (twin of npformer.models.bert).

    x      = embed_dropout(embed_norm(tok_embed(ids) + pos + type_embed(token_type_ids)))   (B, T, D)
    h      = Encoder(x, keep-mask from attention_mask);  pooled = tanh(pooler.dense(h[:, 0]))
    BertForMaskedLM:               logits = output_proj(mlm_norm(gelu(mlm_dense(h))))   (B, T, V)
    BertForSequenceClassification: logits = classifier(cls_dropout(pooled))             (B, C)
"""
from __future__ import annotations

import torch

from npformer.models.config import bert_config  # noqa: F401  (re-exported, as npformer.models.bert does)
from torchformer.layers.activations import Activation
from torchformer.layers.dropout import Dropout
from torchformer.layers.embedding import Embedding
from torchformer.layers.layernorm import LayerNorm
from torchformer.layers.linear import Linear
from torchformer.layers.module import Module, to_torch_dtype
from torchformer.layers.positional import make_positional
from torchformer.models.encoder import Encoder
from torchformer.models.transformer import (
    ModelMixin,
    embedding_scale,
    init_rng,
    keep_input,
    use_shared_dropout_rng,
)


class Pooler(Module):
    """pooled = tanh(dense(h[:, 0])). Children: dense (Linear D -> D). forward(h (B, T, D)) -> (B, D)."""

    def __init__(self, d_model: int, dtype="float32", rng=None, device=None):
        super().__init__()
        self.d_model = d_model
        self.dense = Linear(d_model, d_model, bias=True, dtype=dtype, rng=rng, device=device)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.dense(h[:, 0]))                              # (B, D)


class BertModel(ModelMixin, Module):
    """BertModel(config, seed=0, pooler=True, device=None).

    Children: tok_embed, pos, type_embed (type_vocab_size > 0), embed_norm (embedding_norm),
    embed_dropout, encoder, pooler (pooler=True). forward(input_ids, token_type_ids=None,
    attention_mask=None) -> (hidden (B, T, D), pooled (B, D) or None). `encoder_input` keeps the
    first layer's input.
    """

    _anchor = "tok_embed"

    def __init__(self, config, seed: int = 0, pooler: bool = True, device=None, rng=None):
        super().__init__()
        c = config
        seed = int(seed)
        self.config = c
        self.dtype = to_torch_dtype(c.dtype)
        rng = init_rng(seed) if rng is None else rng
        self.tok_embed = Embedding(c.vocab_size, c.d_model, padding_idx=c.pad_id,
                                   scale=embedding_scale(c), dtype=c.dtype, rng=rng, device=device)
        self.pos = make_positional(c, rng=rng, device=device)
        if c.type_vocab_size:
            self.type_embed = Embedding(c.type_vocab_size, c.d_model, dtype=c.dtype, rng=rng,
                                        device=device)
        if c.embedding_norm:
            self.embed_norm = LayerNorm(c.d_model, c.layer_norm_eps, c.dtype, device)
        self.embed_dropout = Dropout(c.dropout)
        self.encoder = Encoder(c, rng=rng, device=device)
        self.has_pooler = pooler
        if pooler:
            self.pooler = Pooler(c.d_model, c.dtype, rng, device)
        self.encoder_input: torch.Tensor | None = None
        self.dropout_rng = use_shared_dropout_rng(self, seed, device)

    def forward(self, ids, types=None, keep=None):
        """ids, token types (B, T) int64 and keep a bool keep-mask, on the model's device (the call's
        guard converts input_ids, token_type_ids, attention_mask)."""
        c = self.config
        e = self.pos(self.tok_embed(ids))                                   # (B, T, D)
        if c.type_vocab_size:
            e = e + self.type_embed(types)                                  # (B, T, D)
        if c.embedding_norm:
            e = self.embed_norm(e)                                          # (B, T, D)
        x = self.embed_dropout(e)                                           # (B, T, D)
        self.encoder_input = keep_input(x)
        h = self.encoder(x, keep)                                           # (B, T, D)
        return h, (self.pooler(h) if self.has_pooler else None)


class BertForMaskedLM(ModelMixin, Module):
    """BertForMaskedLM(config, seed=0, device=None). Children: bert (no pooler), mlm_dense,
    mlm_activation, mlm_norm, output_proj (weight tied to bert.tok_embed.weight when tie_embeddings).
    forward(input_ids, token_type_ids=None, attention_mask=None) -> logits (B, T, V)."""

    _anchor = "mlm_dense"

    def __init__(self, config, seed: int = 0, device=None):
        super().__init__()
        c = config
        seed = int(seed)
        self.config = c
        self.dtype = to_torch_dtype(c.dtype)
        rng = init_rng(seed)
        self.bert = BertModel(c, seed, pooler=False, device=device, rng=rng)
        self.mlm_dense = Linear(c.d_model, c.d_model, bias=True, dtype=c.dtype, rng=rng,
                                device=device)
        self.mlm_activation = Activation(c.activation)
        self.mlm_norm = LayerNorm(c.d_model, c.layer_norm_eps, c.dtype, device)
        self.output_proj = Linear(c.d_model, c.vocab_size, bias=c.output_bias, dtype=c.dtype,
                                  rng=rng, device=device)
        if c.tie_embeddings:
            self.output_proj.weight = self.bert.tok_embed.weight            # (V, D), shared
        self.dropout_rng = use_shared_dropout_rng(self, seed, device)

    @property
    def encoder_input(self):
        return self.bert.encoder_input

    def forward(self, ids, types=None, keep=None) -> torch.Tensor:
        """As BertModel.forward: the arguments as its guard hands them over."""
        h, _ = self.bert(ids, types, keep)                                  # (B, T, D)
        t = self.mlm_norm(self.mlm_activation(self.mlm_dense(h)))           # (B, T, D)
        return self.output_proj(t)                                          # (B, T, V)


class BertForSequenceClassification(ModelMixin, Module):
    """BertForSequenceClassification(config, seed=0, device=None). Children: bert (with pooler),
    cls_dropout, classifier (Linear D -> num_classes).
    forward(input_ids, token_type_ids=None, attention_mask=None) -> logits (B, C)."""

    _anchor = "classifier"

    def __init__(self, config, seed: int = 0, device=None):
        super().__init__()
        c = config
        seed = int(seed)
        self.config = c
        self.dtype = to_torch_dtype(c.dtype)
        rng = init_rng(seed)
        self.bert = BertModel(c, seed, pooler=True, device=device, rng=rng)
        self.cls_dropout = Dropout(c.dropout)
        self.classifier = Linear(c.d_model, c.num_classes, bias=c.output_bias, dtype=c.dtype,
                                 rng=rng, device=device)
        self.dropout_rng = use_shared_dropout_rng(self, seed, device)

    @property
    def encoder_input(self):
        return self.bert.encoder_input

    def forward(self, ids, types=None, keep=None) -> torch.Tensor:
        """As BertModel.forward: the arguments as its guard hands them over."""
        _, pooled = self.bert(ids, types, keep)                             # (B, D)
        return self.classifier(self.cls_dropout(pooled))                    # (B, C)
