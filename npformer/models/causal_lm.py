"""CausalLM: a decoder-only language model (GPT-style): predict token t+1 from tokens <= t.

    h      = Decoder(dropout(pos(embed(ids))), self_mask = causal AND not-padding)   (B, T, D)
    logits = output_proj(h)                                                          (B, T, V)

The decoder layers have no cross-attention. GPT-2's layout is one config away: gpt2_config() sets
config.GPT2_LAYOUT (pre-norm, tanh GELU, learned positions, a final norm, tied embeddings).
"""
import numpy as np

from npformer.layers.dropout import Dropout
from npformer.layers.embedding import Embedding
from npformer.layers.linear import Linear
from npformer.layers.masks import as_key_mask, combine_masks
from npformer.layers.module import Module
from npformer.layers.positional import make_positional
from npformer.models.config import TransformerConfig
from npformer.models.decoder import Decoder
from npformer.models.transformer import embedding_scale, target_self_mask, use_shared_dropout_rng


class CausalLM(Module):
    """Decoder-only language model: forward(ids (B, T), mask=None, caches=None, offset=0) -> logits
    (B, T, V); the default mask is causal AND not pad_id. With caches (one dict per decoder layer,
    inference only) ids hold only the new tokens, at positions offset ... backward(dlogits) returns
    {"decoder_input": the gradient at the first decoder layer's input}. Seeds as Transformer.
    """

    def __init__(self, config: TransformerConfig, seed: int = 0):
        super().__init__()
        self.config = c = config
        self.dtype = np.dtype(c.dtype)
        rng = np.random.default_rng(seed)                               # initialisation
        self.tgt_embed = Embedding(c.vocab_size, c.d_model, padding_idx=c.pad_id,
                                   scale=embedding_scale(c), dtype=c.dtype, rng=rng)
        self.tgt_pos = make_positional(c, rng=rng)
        self.tgt_dropout = Dropout(c.dropout)
        self.decoder = Decoder(c, cross_attention=False, rng=rng)
        self.output_proj = Linear(c.d_model, c.vocab_size, bias=c.output_bias, dtype=c.dtype,
                                  rng=rng)
        if c.tie_embeddings:
            self.output_proj.weight = self.tgt_embed.weight             # (V, D), shared
        use_shared_dropout_rng(self, seed)

    def forward(self, ids, mask=None, caches: list | None = None, offset: int = 0,
                key_keep=None) -> np.ndarray:
        if mask is None:
            mask = target_self_mask(ids, self.config.pad_id, offset, caches)  # (B, 1, T, past + T)
        mask = combine_masks(mask, as_key_mask(key_keep))
        self._cache = None          # arguments accepted: a forward that fails inside leaves no stale cache

        x = self.tgt_dropout(self.tgt_pos(self.tgt_embed(ids), offset=offset))   # (B, T, D)
        h = self.decoder(x, None, mask, caches=caches)                  # (B, T, D)
        logits = self.output_proj(h)                                    # (B, T, V)
        self._cache = (logits,) if caches is None else None    # cached: inference only
        self._inference = caches is not None
        return logits

    def backward(self, dlogits: np.ndarray) -> dict[str, np.ndarray]:
        self._require_cache()
        dh = self.output_proj.backward(dlogits)                         # (B, T, D)
        dx, _ = self.decoder.backward(dh)                               # (B, T, D)
        self.tgt_embed.backward(self.tgt_pos.backward(self.tgt_dropout.backward(dx)))
        return {"decoder_input": dx}
