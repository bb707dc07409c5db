"""BERT (Devlin et al. 2019): an encoder-only Transformer with segment embeddings, a pooler and two heads.

    e      = tok_embed(ids) + pos[0:T] + type_embed(token_type_ids)          (B, T, D)
    x      = embed_dropout(embed_norm(e))                                    (B, T, D)
    h      = Encoder(x, keep-mask from attention_mask)   post-norm layers, exact GELU, eps 1e-12
    pooled = tanh(pooler.dense(h[:, 0]))                 the [CLS] position  (B, D)

  BertForMaskedLM               logits = output_proj(mlm_norm(gelu(mlm_dense(h))))       (B, T, V)
                                output_proj.weight is tok_embed.weight (tie_embeddings), plus a bias
  BertForSequenceClassification logits = classifier(cls_dropout(pooled))                 (B, C)

Everything except the pooler's tanh and the segment embedding is a layer npformer already has;
`bert_config()` sets BERT's choices (config.BERT_LAYOUT).

Backward of the new pieces:
    y = tanh(z)                     dz = dy * (1 - y^2)
    e = a + b + c (three lookups)   each lookup table gets de (embedding_backward sums by id)
    pooled reads h[:, 0] only      dh[:, 0] += dpooled-path, zero elsewhere
"""
from typing import NamedTuple

import numpy as np

from npformer.layers.activations import Activation
from npformer.layers.dropout import Dropout
from npformer.layers.embedding import Embedding
from npformer.layers.layernorm import LayerNorm
from npformer.layers.linear import Linear
from npformer.layers.masks import padding_mask
from npformer.layers.module import Module
from npformer.layers.positional import make_positional
from npformer.models.config import BERT_LAYOUT, TransformerConfig, bert_config  # noqa: F401 (re-exported)
from npformer.models.encoder import Encoder
from npformer.models.transformer import embedding_scale, use_shared_dropout_rng


# -- tanh pair and the pooler -----------------------------------------------------------------------
class TanhCache(NamedTuple):
    y: np.ndarray                 # (...) tanh(x), all the derivative needs


def tanh_forward(x: np.ndarray):
    y = np.tanh(x)                                              # (...)
    return y, TanhCache(y)


def tanh_backward(dout: np.ndarray, cache: TanhCache) -> np.ndarray:
    y = cache.y
    return dout * (1.0 - y * y)                                 # (...) tanh'(x) = 1 - tanh(x)^2


class Pooler(Module):
    """pooled = tanh(dense(h[:, 0])): the first ([CLS]) position through a D -> D layer.
    Children: dense (Linear). forward(h (B, T, D)) -> (B, D); backward(dpooled) -> dh (B, T, D)."""

    def __init__(self, d_model: int, dtype="float32", rng: np.random.Generator | None = None):
        super().__init__()
        self.d_model = d_model
        self.dtype = np.dtype(dtype)
        self.dense = Linear(d_model, d_model, bias=True, dtype=dtype, rng=rng)

    def forward(self, h: np.ndarray) -> np.ndarray:
        pooled, tcache = tanh_forward(self.dense.forward(h[:, 0, :]))   # (B, D)
        self._cache = (tcache, h.shape)
        return pooled

    def backward(self, dpooled: np.ndarray) -> np.ndarray:
        tcache, h_shape = self._require_cache()
        dz = tanh_backward(dpooled, tcache)                     # (B, D)
        dh = np.zeros(h_shape, dtype=self.dtype)                # (B, T, D)
        dh[:, 0, :] = self.dense.backward(dz)                   # only position 0 was read
        return dh


# -- the encoder with embeddings and pooler ---------------------------------------------------------
class BertModel(Module):
    """Embeddings + encoder (+ pooler): forward(input_ids (B, T), token_type_ids=None,
    attention_mask=None) -> (hidden (B, T, D), pooled (B, D) or None). attention_mask: (B, T) with
    1 = real token (Hugging Face's sense) or a 4-d keep-mask; None masks pad_id. backward(dhidden,
    dpooled) (either may be None) returns {"encoder_input": the gradient at the first encoder
    layer's input}."""

    def __init__(self, config: TransformerConfig, seed: int = 0, pooler: bool = True,
                 rng: np.random.Generator | None = None):
        super().__init__()
        self.config = c = config
        self.dtype = np.dtype(c.dtype)
        rng = np.random.default_rng(seed) if rng is None else rng       # initialisation
        self.tok_embed = Embedding(c.vocab_size, c.d_model, padding_idx=c.pad_id,
                                   scale=embedding_scale(c), dtype=c.dtype, rng=rng)
        self.pos = make_positional(c, rng=rng)
        if c.type_vocab_size:
            self.type_embed = Embedding(c.type_vocab_size, c.d_model, dtype=c.dtype, rng=rng)
        if c.embedding_norm:
            self.embed_norm = LayerNorm(c.d_model, c.layer_norm_eps, c.dtype)
        self.embed_dropout = Dropout(c.dropout)
        self.encoder = Encoder(c, rng=rng)
        self.has_pooler = pooler
        if pooler:
            self.pooler = Pooler(c.d_model, c.dtype, rng)
        use_shared_dropout_rng(self, seed)

    def forward(self, input_ids, token_type_ids=None, attention_mask=None):
        """token_type_ids and attention_mask as the guard returns them (or None)."""
        c, ids, types, keep = self.config, input_ids, token_type_ids, attention_mask
        if types is None and c.type_vocab_size:
            types = np.zeros(ids.shape, dtype=np.int64)                 # all segment 0
        if keep is None and c.pad_id is not None:
            keep = padding_mask(ids, c.pad_id)                          # (B, 1, 1, T)
        self._cache = None          # arguments accepted: a forward that fails inside leaves no stale cache

        e = self.pos(self.tok_embed(ids))                               # (B, T, D) tokens + positions
        if c.type_vocab_size:
            e = e + self.type_embed(types)                              # (B, T, D) + segments
        if c.embedding_norm:
            e = self.embed_norm(e)                                      # (B, T, D)
        x = self.embed_dropout(e)                                       # (B, T, D)
        h = self.encoder(x, keep)                                       # (B, T, D)
        pooled = self.pooler(h) if self.has_pooler else None            # (B, D)
        self._cache = (h, pooled)
        return h, pooled

    def backward(self, dhidden: np.ndarray | None, dpooled: np.ndarray | None = None):
        h, _ = self._require_cache()
        dh = np.zeros_like(h) if dhidden is None else dhidden.copy()     # (B, T, D)
        if dpooled is not None:
            dh += self.pooler.backward(dpooled)                         # (B, T, D) [CLS] row only
        dx = self.encoder.backward(dh)                                  # (B, T, D)
        de = self.embed_dropout.backward(dx)                            # (B, T, D)
        if self.config.embedding_norm:
            de = self.embed_norm.backward(de)                           # (B, T, D)
        if self.config.type_vocab_size:
            self.type_embed.backward(de)                                # sum adds: same gradient
        self.tok_embed.backward(self.pos.backward(de))
        return {"encoder_input": dx}


# -- heads ------------------------------------------------------------------------------------------
class BertForMaskedLM(Module):
    """BERT with the masked-LM head: logits (B, T, V) for every position."""

    def __init__(self, config: TransformerConfig, seed: int = 0):
        super().__init__()
        self.config = c = config
        self.dtype = np.dtype(c.dtype)
        rng = np.random.default_rng(seed)
        self.bert = BertModel(c, seed, pooler=False, rng=rng)
        self.mlm_dense = Linear(c.d_model, c.d_model, bias=True, dtype=c.dtype, rng=rng)
        self.mlm_activation = Activation(c.activation)
        self.mlm_norm = LayerNorm(c.d_model, c.layer_norm_eps, c.dtype)
        self.output_proj = Linear(c.d_model, c.vocab_size, bias=c.output_bias, dtype=c.dtype,
                                  rng=rng)
        if c.tie_embeddings:
            self.output_proj.weight = self.bert.tok_embed.weight        # (V, D), shared
        use_shared_dropout_rng(self, seed)

    def forward(self, input_ids, token_type_ids=None, attention_mask=None) -> np.ndarray:
        self._cache = None
        h, _ = self.bert.forward(input_ids, token_type_ids, attention_mask)     # (B, T, D)
        t = self.mlm_norm(self.mlm_activation(self.mlm_dense(h)))       # (B, T, D)
        logits = self.output_proj(t)                                    # (B, T, V)
        self._cache = (logits,)
        return logits

    def backward(self, dlogits: np.ndarray) -> dict[str, np.ndarray]:
        self._require_cache()
        dt = self.output_proj.backward(dlogits)                         # (B, T, D)
        dh = self.mlm_dense.backward(self.mlm_activation.backward(self.mlm_norm.backward(dt)))
        return self.bert.backward(dh)                                   # (B, T, D) at encoder input


class BertForSequenceClassification(Module):
    """BERT with a classifier on the pooled [CLS] vector: logits (B, C)."""

    def __init__(self, config: TransformerConfig, seed: int = 0):
        super().__init__()
        self.config = c = config
        self.dtype = np.dtype(c.dtype)
        rng = np.random.default_rng(seed)
        self.bert = BertModel(c, seed, pooler=True, rng=rng)
        self.cls_dropout = Dropout(c.dropout)
        self.classifier = Linear(c.d_model, c.num_classes, bias=c.output_bias, dtype=c.dtype,
                                 rng=rng)
        use_shared_dropout_rng(self, seed)

    def forward(self, input_ids, token_type_ids=None, attention_mask=None) -> np.ndarray:
        self._cache = None
        _, pooled = self.bert.forward(input_ids, token_type_ids, attention_mask)    # (B, D)
        logits = self.classifier(self.cls_dropout(pooled))                  # (B, C)
        self._cache = (logits,)
        return logits

    def backward(self, dlogits: np.ndarray) -> dict[str, np.ndarray]:
        self._require_cache()
        dpooled = self.cls_dropout.backward(self.classifier.backward(dlogits))   # (B, D)
        return self.bert.backward(None, dpooled)
