"""BERT: encoder-only Transformer with segment embeddings, pooler and two heads (twin of npformer.models.bert).

    x      = embed_dropout(embed_norm(tok_embed(ids) + pos + type_embed(token_type_ids)))   (B, T, D)
    h      = Encoder(x, keep-mask from attention_mask);  pooled = tanh(pooler.dense(h[:, 0]))
    BertForMaskedLM:               logits = output_proj(mlm_norm(gelu(mlm_dense(h))))   (B, T, V)
    BertForSequenceClassification: logits = classifier(cls_dropout(pooled))             (B, C)
"""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

from npformer.models.config import bert_config  # noqa: F401  (re-exported, as npformer.models.bert does)
from torchformer.layers.activations import Activation
from torchformer.layers.dropout import Dropout
from torchformer.layers.embedding import Embedding
from torchformer.layers.layernorm import LayerNorm
from torchformer.layers.linear import Linear
from torchformer.layers.masks import padding_mask
from torchformer.layers.positional import make_positional
from torchformer.layers.validation import (
    check_float,
    check_ids,
    check_mask,
    describe,
    run_checked,
    to_torch_dtype,
    trusted,
)
from torchformer.models.encoder import Encoder, check_config
from torchformer.models.transformer import (
    ModelMixin,
    check_seed,
    check_token_ids,
    embedding_scale,
    init_rng,
    keep_input,
    use_shared_dropout_rng,
)


class Pooler(nn.Module):
    """pooled = tanh(dense(h[:, 0])). Children: dense (Linear D -> D). forward(h (B, T, D)) -> (B, D)."""

    def __init__(self, d_model: int, dtype="float32", rng=None, device=None):
        super().__init__()
        self.d_model = d_model
        self.dense = Linear(d_model, d_model, bias=True, dtype=dtype, rng=rng, device=device)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        if not trusted():
            check_float("h", h, dtype=self.dense.weight.dtype, ndim=3,
                        shape=(None, None, self.d_model))
        return torch.tanh(self.dense(h[:, 0]))                              # (B, D)


def attention_keep(attention_mask, ids: torch.Tensor, pad_id, num_heads: int):
    """As npformer.models.bert.attention_keep: None -> padding mask from pad_id; (B, T) 1 = real token ->
    (B, 1, 1, T); a 4-d keep-mask broadcastable to (B, H, T, T) as it is."""
    B, T = ids.shape
    if attention_mask is None:
        return padding_mask(ids, pad_id)
    m = attention_mask if isinstance(attention_mask, torch.Tensor) else np.asarray(attention_mask)
    if m.ndim == 2:
        if tuple(m.shape) != (B, T):
            raise ValueError(f"attention_mask: expected shape ({B}, {T}) (input_ids' shape, 1 = "
                             f"real token), got {tuple(m.shape)}")
        return check_mask("attention_mask", m[:, None, None, :], (B, num_heads, T, T),
                          device=ids.device)
    if m.ndim == 4:
        return check_mask("attention_mask", m, (B, num_heads, T, T), device=ids.device)
    raise ValueError(f"attention_mask: expected (B, T) = ({B}, {T}) or a 4-d keep-mask "
                     f"broadcastable to ({B}, {num_heads}, {T}, {T}), got {describe(m)}")


def check_token_types(token_type_ids, ids: torch.Tensor, type_vocab_size: int):
    """Segment ids (B, T) in [0, type_vocab_size); None means all 0 (as Hugging Face)."""
    if token_type_ids is None:
        return torch.zeros_like(ids) if type_vocab_size else None
    if not type_vocab_size:
        raise ValueError("token_type_ids: this model has no segment embedding "
                         "(config.type_vocab_size=0); expected None")
    tt = check_ids("token_type_ids", token_type_ids, type_vocab_size, ndim=2, device=ids.device)
    if tt.shape != ids.shape:
        raise ValueError(f"token_type_ids: expected input_ids' shape {tuple(ids.shape)}, got "
                         f"{tuple(tt.shape)}")
    return tt


class BertModel(ModelMixin, nn.Module):
    """BertModel(config, seed=0, pooler=True, device=None).

    Children: tok_embed, pos, type_embed (type_vocab_size > 0), embed_norm (embedding_norm),
    embed_dropout, encoder, pooler (pooler=True). forward(input_ids, token_type_ids=None,
    attention_mask=None) -> (hidden (B, T, D), pooled (B, D) or None). `encoder_input` keeps the
    first layer's input.
    """

    _anchor = "tok_embed"

    def __init__(self, config, seed: int = 0, pooler: bool = True, device=None, rng=None):
        super().__init__()
        c = check_config("config", config)
        seed = check_seed(seed)
        if not isinstance(pooler, bool):
            raise TypeError(f"pooler: expected a bool, got {pooler!r}")
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

    def check_inputs(self, input_ids, token_type_ids, attention_mask):
        """(ids, token types, keep-mask) checked and on the model's device."""
        c = self.config
        ids = check_token_ids("input_ids", input_ids, c.vocab_size, c.max_len, device=self.device)
        types = check_token_types(token_type_ids, ids, c.type_vocab_size)
        keep = attention_keep(attention_mask, ids, c.pad_id, c.num_heads)
        return ids, types, keep

    def forward(self, input_ids, token_type_ids=None, attention_mask=None):
        if trusted():                                   # called by a checked head: already checked
            return self._forward(input_ids, token_type_ids, attention_mask)
        return run_checked(self._forward, *self.check_inputs(input_ids, token_type_ids,
                                                             attention_mask))

    def _forward(self, ids, types, keep):
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


class BertForMaskedLM(ModelMixin, nn.Module):
    """BertForMaskedLM(config, seed=0, device=None). Children: bert (no pooler), mlm_dense,
    mlm_activation, mlm_norm, output_proj (weight tied to bert.tok_embed.weight when tie_embeddings).
    forward(input_ids, token_type_ids=None, attention_mask=None) -> logits (B, T, V)."""

    _anchor = "mlm_dense"

    def __init__(self, config, seed: int = 0, device=None):
        super().__init__()
        c = check_config("config", config)
        seed = check_seed(seed)
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

    def forward(self, input_ids, token_type_ids=None, attention_mask=None) -> torch.Tensor:
        return run_checked(self._forward, *self.bert.check_inputs(input_ids, token_type_ids,
                                                                  attention_mask))

    def _forward(self, ids, types, keep) -> torch.Tensor:
        h, _ = self.bert(ids, types, keep)                                  # (B, T, D)
        t = self.mlm_norm(self.mlm_activation(self.mlm_dense(h)))           # (B, T, D)
        return self.output_proj(t)                                          # (B, T, V)


class BertForSequenceClassification(ModelMixin, nn.Module):
    """BertForSequenceClassification(config, seed=0, device=None). Children: bert (with pooler),
    cls_dropout, classifier (Linear D -> num_classes).
    forward(input_ids, token_type_ids=None, attention_mask=None) -> logits (B, C)."""

    _anchor = "classifier"

    def __init__(self, config, seed: int = 0, device=None):
        super().__init__()
        c = check_config("config", config)
        seed = check_seed(seed)
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

    def forward(self, input_ids, token_type_ids=None, attention_mask=None) -> torch.Tensor:
        return run_checked(self._forward, *self.bert.check_inputs(input_ids, token_type_ids,
                                                                  attention_mask))

    def _forward(self, ids, types, keep) -> torch.Tensor:
        _, pooled = self.bert(ids, types, keep)                             # (B, D)
        return self.classifier(self.cls_dropout(pooled))                    # (B, C)
