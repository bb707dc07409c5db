"""The encoder-decoder Transformer of "Attention Is All You Need" (Vaswani et al. 2017, figure 1).

    memory = Encoder(dropout(pos(embed_src(src))), src_mask)                       (B, S, D)
    logits = output_proj(Decoder(dropout(pos(embed_tgt(tgt))), memory, tgt_mask, src_mask))   (B, T, V)

Also here: the small helpers every model shares (the shared dropout generator, the embedding scale,
the source keep-mask, the target self-attention mask with its incremental-decoding form).
"""
import math

import numpy as np

from npformer.layers.dropout import Dropout
from npformer.layers.embedding import Embedding
from npformer.layers.linear import Linear
from npformer.layers.masks import as_key_mask, causal_mask, combine_masks, padding_mask
from npformer.layers.module import Module
from npformer.layers.positional import make_positional
from npformer.models.config import TransformerConfig
from npformer.models.decoder import Decoder
from npformer.models.encoder import Encoder


# -- helpers shared by Transformer, EncoderClassifier and CausalLM ---------------------------------
def use_shared_dropout_rng(model: Module, seed: int) -> np.random.Generator:
    """Give every Dropout of `model` one generator, default_rng(seed + 1), drawn in forward order."""
    rng = np.random.default_rng(seed + 1)
    for _, m in model.named_modules():
        if isinstance(m, Dropout):
            m.rng = rng
    return rng


def embedding_scale(config: TransformerConfig) -> float:
    """sqrt(d_model) when config.scale_embeddings (the paper, section 3.4), else 1."""
    return math.sqrt(config.d_model) if config.scale_embeddings else 1.0


def source_mask(src: np.ndarray, pad_id: int | None, src_mask=None,
                key_keep=None) -> np.ndarray | None:
    """Keep-mask of encoder self-attention (and of the memory): src_mask, or when None the padding
    mask of src (B, 1, 1, S) (None without pad_id), AND the key keep-mask (B, S) when given."""
    if src_mask is None:
        src_mask = padding_mask(src, pad_id)                            # (B, 1, 1, S) or None
    return combine_masks(src_mask, as_key_mask(key_keep))


def target_self_mask(ids: np.ndarray, pad_id: int | None, offset: int = 0,
                     caches: list | None = None) -> np.ndarray:
    """Keep-mask of decoder self-attention: causal AND key is not padding, (B, 1, T, past + T).

    Keys: the `past` tokens the caches hold (offset; 0 without caches, where offset only moves the
    positions), then this call's T; query i may see key j <= past + i unless token j is pad_id. The
    padding of cached keys is kept in caches[0]["tgt_keep"] (B, past), extended with this call's.
    """
    B, T = ids.shape
    past = offset if caches else 0                                      # keys the caches hold
    causal = causal_mask(T, past + T)                                   # (1, 1, T, past + T)
    if pad_id is None:
        return causal
    keep = ids != pad_id                                                # (B, T) new keys
    if caches:
        kept = caches[0].get("tgt_keep")                                # (B, past) or None
        if kept is None or kept.shape != (B, past):
            kept = np.ones((B, past), dtype=bool)                       # unknown: all kept
        keep = np.concatenate([kept, keep], axis=1)                     # (B, past + T)
        caches[0]["tgt_keep"] = keep
    return combine_masks(causal, keep[:, None, None, :])                # (B, 1, T, past + T)


# -- the model ------------------------------------------------------------------------------------
class Transformer(Module):
    """Encoder-decoder Transformer for sequence-to-sequence tasks (translation, copying, sorting...).

    forward(src (B, S), tgt (B, T), src_mask=None, tgt_mask=None) -> logits (B, T, V_tgt); the masks
    default to source_mask and target_self_mask below. backward(dlogits) returns the gradients at the
    first encoder and decoder layer's inputs, {"encoder_input", "decoder_input"}. encode / decode are
    the inference halves (decode with caches: tgt holds only the new tokens, at positions offset ..).
    Initialisation draws from default_rng(seed), the Dropouts from use_shared_dropout_rng's.
    """

    def __init__(self, config: TransformerConfig, seed: int = 0):
        super().__init__()
        self.config = c = config
        self.dtype = np.dtype(c.dtype)
        rng = np.random.default_rng(seed)                               # initialisation
        scale = embedding_scale(c)
        self.src_embed = Embedding(c.src_vocab, c.d_model, padding_idx=c.pad_id, scale=scale,
                                   dtype=c.dtype, rng=rng)
        self.tgt_embed = Embedding(c.tgt_vocab, c.d_model, padding_idx=c.pad_id, scale=scale,
                                   dtype=c.dtype, rng=rng)
        if c.share_embeddings:
            self.tgt_embed.weight = self.src_embed.weight               # one Parameter, two uses
        self.src_pos = make_positional(c, rng=rng)
        self.tgt_pos = make_positional(c, rng=rng)
        self.src_dropout = Dropout(c.dropout)
        self.tgt_dropout = Dropout(c.dropout)
        self.encoder = Encoder(c, rng=rng)
        self.decoder = Decoder(c, cross_attention=True, rng=rng)
        self.output_proj = Linear(c.d_model, c.tgt_vocab, bias=c.output_bias, dtype=c.dtype, rng=rng)
        if c.tie_embeddings:
            self.output_proj.weight = self.tgt_embed.weight             # (V_tgt, D), shared
        use_shared_dropout_rng(self, seed)

    # -- pieces ----------------------------------------------------------------------------------
    def _encode(self, src: np.ndarray, src_mask) -> np.ndarray:
        x = self.src_dropout(self.src_pos(self.src_embed(src)))          # (B, S, D)
        return self.encoder(x, src_mask)                                 # (B, S, D) memory

    def _decode(self, tgt, memory, src_mask, tgt_mask, caches=None, offset: int = 0) -> np.ndarray:
        y = self.tgt_dropout(self.tgt_pos(self.tgt_embed(tgt), offset=offset))  # (B, T, D)
        h = self.decoder(y, memory, tgt_mask, src_mask, caches=caches)   # (B, T, D)
        return self.output_proj(h)                                       # (B, T, V)

    # -- public ----------------------------------------------------------------------------------
    def encode(self, src, src_mask=None, *, src_key_keep=None) -> np.ndarray:
        """memory (B, S, D) for src (B, S); inference (no backward follows)."""
        src, src_mask, keep = self.checked("encode", src, src_mask, src_key_keep=src_key_keep)
        self._cache, self._inference = None, True
        return self._encode(src, source_mask(src, self.config.pad_id, src_mask, keep))

    def decode(self, tgt, memory, src_mask=None, tgt_mask=None, caches: list | None = None,
               offset: int = 0, *, src_key_keep=None) -> np.ndarray:
        """logits (B, T, V) of tgt (B, T) given memory (B, S, D); inference (no backward follows).
        src_mask masks memory positions (None: attend to all S)."""
        tgt, memory, src_mask, tgt_mask, caches, offset, src_keep = self.checked(
            "decode", tgt, memory, src_mask, tgt_mask, caches, offset, src_key_keep=src_key_keep)
        src_mask = combine_masks(src_mask, src_keep)
        if tgt_mask is None:
            tgt_mask = target_self_mask(tgt, self.config.pad_id, offset, caches)   # (B, 1, T, past + T)
        self._cache, self._inference = None, True
        return self._decode(tgt, memory, src_mask, tgt_mask, caches, offset)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, src_key_keep=None,
                tgt_key_keep=None) -> np.ndarray:
        src_mask = source_mask(src, self.config.pad_id, src_mask, src_key_keep)  # (B, 1, 1, S)
        if tgt_mask is None:
            tgt_mask = target_self_mask(tgt, self.config.pad_id)         # (B, 1, T, T)
        tgt_mask = combine_masks(tgt_mask, as_key_mask(tgt_key_keep))
        self._cache = None          # arguments accepted: a forward that fails inside leaves no stale cache
        memory = self._encode(src, src_mask)                             # (B, S, D)
        logits = self._decode(tgt, memory, src_mask, tgt_mask)           # (B, T, V)
        self._cache, self._inference = (logits,), False                  # children: their own
        return logits

    def backward(self, dlogits: np.ndarray) -> dict[str, np.ndarray]:
        self._require_cache()
        dh = self.output_proj.backward(dlogits)                          # (B, T, D)
        d_dec_in, dmemory = self.decoder.backward(dh)                    # (B, T, D), (B, S, D)
        d_enc_in = self.encoder.backward(dmemory)                        # (B, S, D)
        # the embeddings: x = dropout(pos(embed(ids))); embed accumulates its weight's gradient
        self.tgt_embed.backward(self.tgt_pos.backward(self.tgt_dropout.backward(d_dec_in)))
        self.src_embed.backward(self.src_pos.backward(self.src_dropout.backward(d_enc_in)))
        return {"encoder_input": d_enc_in, "decoder_input": d_dec_in}
