"""EncoderClassifier: a Transformer encoder with a classification head (sentence classification).

    h      = Encoder(dropout(pos(embed(src))), src_mask)                   (B, S, D)
    pooled = h[:, 0]                            pooling "first" (a [CLS]-style first token)
           = sum_s w[b, s] h[b, s],  w = keep / count   pooling "mean" (over non-pad positions)   (B, D)
    logits = classifier(pooled)                                           (B, C)
"""
from typing import NamedTuple

import numpy as np

from npformer.layers.dropout import Dropout
from npformer.layers.embedding import Embedding
from npformer.layers.linear import Linear
from npformer.layers.module import Module
from npformer.layers.positional import make_positional
from npformer.models.config import TransformerConfig
from npformer.models.encoder import Encoder
from npformer.models.transformer import embedding_scale, source_mask, use_shared_dropout_rng


class ClassifierCache(NamedTuple):
    hidden_shape: tuple           # (B, S, D) the encoder output's shape
    pool_weights: np.ndarray | None  # (B, S) mean pooling weights keep / count; None for "first"
    logits: np.ndarray            # (B, C) the forward output


class EncoderClassifier(Module):
    """Encoder + pooling + linear head, one label per sequence: forward(src (B, S), src_mask=None)
    -> logits (B, C); backward(dlogits) returns {"encoder_input": the gradient at the first encoder
    layer's input}.
    The "mean" pooling averages the positions whose token is not pad_id and that src_key_keep (the
    key padding, True = a real token) keeps; a row with none pools to 0. src_mask (any attention
    pattern) does not change which positions are averaged. Seeds as Transformer.
    """

    def __init__(self, config: TransformerConfig, seed: int = 0):
        super().__init__()
        self.config = c = config
        self.dtype = np.dtype(c.dtype)
        rng = np.random.default_rng(seed)                               # initialisation
        self.src_embed = Embedding(c.vocab_size, c.d_model, padding_idx=c.pad_id,
                                   scale=embedding_scale(c), dtype=c.dtype, rng=rng)
        self.src_pos = make_positional(c, rng=rng)
        self.src_dropout = Dropout(c.dropout)
        self.encoder = Encoder(c, rng=rng)
        self.classifier = Linear(c.d_model, c.num_classes, bias=c.output_bias, dtype=c.dtype, rng=rng)
        use_shared_dropout_rng(self, seed)

    def forward(self, src, src_mask=None, src_key_keep=None) -> np.ndarray:
        c = self.config
        B, S = src.shape
        src_mask = source_mask(src, c.pad_id, src_mask, src_key_keep)  # (B, 1, 1, S) or given
        self._cache = None          # arguments accepted: a forward that fails inside leaves no stale cache

        x = self.src_dropout(self.src_pos(self.src_embed(src)))        # (B, S, D)
        h = self.encoder(x, src_mask)                                   # (B, S, D)
        if c.pooling == "first":
            pool_weights = None
            pooled = h[:, 0, :]                                         # (B, D)
        else:
            keep = np.ones((B, S), bool) if c.pad_id is None else src != c.pad_id   # (B, S)
            if src_key_keep is not None:
                keep = keep & src_key_keep.reshape(B, S)               # (B, S) and not key padding
            count = keep.sum(axis=1, keepdims=True)                     # (B, 1)
            pool_weights = (keep / np.maximum(count, 1)).astype(self.dtype)         # (B, S) w
            pooled = np.einsum("bs,bsd->bd", pool_weights, h)           # (B, D) sum_s w h
        logits = self.classifier(pooled)                                # (B, C)
        self._cache = ClassifierCache(h.shape, pool_weights, logits)
        return logits

    def backward(self, dlogits: np.ndarray) -> dict[str, np.ndarray]:
        hidden_shape, pool_weights, _ = self._require_cache()
        dpooled = self.classifier.backward(dlogits)                     # (B, D)
        if pool_weights is None:
            dh = np.zeros(hidden_shape, dtype=self.dtype)               # (B, S, D)
            dh[:, 0, :] = dpooled                                       # only position 0 was read
        else:
            dh = pool_weights[:, :, None] * dpooled[:, None, :]         # (B, S, D) w[b,s] dpooled[b]
        dx = self.encoder.backward(dh)                                  # (B, S, D)
        self.src_embed.backward(self.src_pos.backward(self.src_dropout.backward(dx)))
        return {"encoder_input": dx}
