"""The guards of npformer.models: constructors, calls, encode/decode and upstream gradients.

A model checks its own arguments once and then calls its top-level stages (embeddings, encoder,
decoder, head) through their checked entries too, so a NaN/inf made inside it (a bad weight, a float32
overflow) is reported at the next stage instead of reaching the logits silently.
"""
from __future__ import annotations

import numpy as np

from npformer.guards.layers import gradient_of_output
from npformer.guards.register import checks, outermost_backward
from npformer.guards.rules import (
    check_cache_list,
    check_config,
    check_config_fits_memory,
    check_flag,
    check_has_keys,
    check_key_keep_shape,
    check_model_mask_shape,
    check_seed,
)
from npformer.guards.validation import check_float, check_grad, check_ids, check_length, check_mask, describe
from npformer.models.bert import BertForMaskedLM, BertForSequenceClassification, BertModel, Pooler
from npformer.models.causal_lm import CausalLM
from npformer.models.classifier import EncoderClassifier
from npformer.models.decoder import Decoder, DecoderLayer
from npformer.models.encoder import Encoder, EncoderLayer
from npformer.models.transformer import Transformer

HEADS = (Transformer, EncoderClassifier, CausalLM, BertForMaskedLM, BertForSequenceClassification)


# -- constructors -------------------------------------------------------------------------------------


@checks("init", EncoderLayer, Encoder)
def stack_init(config, rng=None):
    check_config("config", config)


@checks("init", DecoderLayer, Decoder)
def decoder_init(config, cross_attention=True, rng=None):
    check_config("config", config)
    check_flag("cross_attention", cross_attention)


@checks("init", *HEADS)
def model_init(config, seed=0):
    check_config("config", config)
    check_seed(seed)
    check_config_fits_memory("config", config)


@checks("init", BertModel)
def bert_init(config, seed=0, pooler=True, rng=None):
    model_init(config, seed)
    check_flag("pooler", pooler)


# -- mask and id arguments ------------------------------------------------------------------------------
def shape_of(mask) -> tuple:
    return tuple(np.shape(mask)) if not hasattr(mask, "shape") else tuple(mask.shape)


def check_model_mask(name: str, mask, target, keep_arg: str):
    """A model's attention-mask argument: 4-D (batch, heads, q_len, k_len) with size-1 axes
    broadcasting, or 2-D (q_len, k_len) shared by the batch. Refused: rank 1 or 3 (which axes?), and
    a 2-D mask whose first axis is the batch size (> 1), which could be a torch-style (batch, k_len)
    key-padding mask: those go in `keep_arg`. Returns the bool mask (not broadcast), or None."""
    if mask is None:
        return None
    check_model_mask_shape(name, shape_of(mask), target[0], keep_arg)
    return check_mask(name, mask, target)


def key_keep_mask(name: str, keep, batch: int, k_len: int) -> np.ndarray | None:
    """A (batch, k_len) key keep-mask (True / 1 = a real token that may be attended to; the NEGATION
    of torch's key_padding_mask) as a (batch, 1, 1, k_len) bool keep-mask; None stays None."""
    if keep is None:
        return None
    check_key_keep_shape(name, shape_of(keep), batch, k_len)
    return check_mask(name, keep, (batch, k_len))[:, None, None, :]          # (B, 1, 1, K)


def check_token_ids(name: str, ids, vocab_size: int, max_len: int, offset: int = 0) -> np.ndarray:
    """Integer ids (B, T), 1 <= T, every id in [0, vocab_size), offset + T <= max_len."""
    ids = check_ids(name, ids, vocab_size, ndim=2)
    if ids.shape[0] < 1 or ids.shape[1] < 1:
        raise ValueError(f"{name}: expected a non-empty (batch, seq) array, got shape {ids.shape}")
    check_length(name, offset + ids.shape[1], max_len)
    return ids


def cached_length(cache) -> int:
    """Number of positions already in a layer cache {"self": {"k": (B, H, Tpast, dk), ...}, ...}."""
    if cache is None:
        return 0
    if not isinstance(cache, dict):
        raise TypeError(f"cache: expected a dict {{'self': {{...}}, 'cross': {{...}}}} (or None), got "
                        f"{type(cache).__name__}")
    self_cache = cache.get("self") or {}
    return self_cache["k"].shape[2] if "k" in self_cache else 0


def check_offset(offset, caches, num_layers: int) -> int:
    """The number of earlier positions of an incremental decode; must match what the caches hold,
    a list of one cache dict per decoder layer (or None)."""
    check_cache_list(caches, num_layers)
    if isinstance(offset, bool) or not isinstance(offset, (int, np.integer)) or offset < 0:
        raise ValueError(f"offset: expected a non-negative int, got {offset!r}")
    held = cached_length(caches[0]) if caches else offset
    if held != offset:
        raise ValueError(f"offset: expected {held} (the positions the caches hold), got {offset}")
    return int(offset)


# -- encoder and decoder stacks ---------------------------------------------------------------------------
@checks("call", EncoderLayer, Encoder)
def encoder_call(m, x, mask=None):
    c = m.config
    check_float("x", x, dtype=m.dtype, ndim=3, shape=(None, None, c.d_model))
    check_has_keys("x", x.shape, 1)
    B, T, _ = x.shape
    return x, check_mask("mask", mask, (B, c.num_heads, T, T))


def decoder_arguments(m, x, memory, self_mask, memory_mask, past: int):
    """x (B, T, D); memory (B, S, D) exactly when m has cross-attention; the masks as bool."""
    c = m.config
    check_float("x", x, dtype=m.dtype, ndim=3, shape=(None, None, c.d_model))
    B, T, _ = x.shape
    if m.cross_attention:
        if memory is None:
            raise ValueError(f"memory: {type(m).__name__} with cross_attention=True needs the "
                             f"encoder output (B, S, {c.d_model}), got None")
        check_float("memory", memory, dtype=m.dtype, ndim=3, shape=(B, None, c.d_model))
        check_has_keys("memory", memory.shape, 1)
        memory_mask = check_mask("memory_mask", memory_mask, (B, c.num_heads, T, memory.shape[1]))
    else:
        if memory is not None:
            raise ValueError(f"memory: {type(m).__name__} with cross_attention=False takes no "
                             f"memory, got {type(memory).__name__}")
        if memory_mask is not None:
            raise ValueError(f"memory_mask: {type(m).__name__} with cross_attention=False takes "
                             f"no memory_mask, got {type(memory_mask).__name__}")
    if past + T == 0:
        check_has_keys("x", x.shape, 1)
    self_mask = check_mask("self_mask", self_mask, (B, c.num_heads, T, past + T))
    return self_mask, memory_mask


@checks("call", DecoderLayer)
def decoder_layer_call(m, x, memory=None, self_mask=None, memory_mask=None, cache=None):
    past = cached_length(cache)
    self_mask, memory_mask = decoder_arguments(m, x, memory, self_mask, memory_mask, past)
    return x, memory, self_mask, memory_mask, cache


@checks("call", Decoder)
def decoder_call(m, x, memory=None, self_mask=None, memory_mask=None, caches=None):
    check_cache_list(caches, len(m.layers))
    past = cached_length(caches[0]) if caches else 0
    self_mask, memory_mask = decoder_arguments(m, x, memory, self_mask, memory_mask, past)
    return x, memory, self_mask, memory_mask, caches


checks("backward", EncoderLayer, Encoder, DecoderLayer, Decoder)(gradient_of_output)


# -- the Transformer --------------------------------------------------------------------------------------
@checks("call", Transformer)
def transformer_call(m, src, tgt, src_mask=None, tgt_mask=None, *, src_key_keep=None,
                     tgt_key_keep=None):
    c = m.config
    src = check_token_ids("src", src, c.src_vocab, c.max_len)
    tgt = check_token_ids("tgt", tgt, c.tgt_vocab, c.max_len)
    (B, S), T, H = src.shape, tgt.shape[1], c.num_heads
    if tgt.shape[0] != B:
        raise ValueError(f"tgt: expected batch size {B} (src's), got shape {tgt.shape}")
    src_keep = key_keep_mask("src_key_keep", src_key_keep, B, S)
    if src_mask is not None:
        src_mask = check_model_mask("src_mask", src_mask, (B, H, S, S), "src_key_keep")
        check_mask("src_mask", src_mask, (B, H, T, S))
    if tgt_mask is not None:
        tgt_mask = check_model_mask("tgt_mask", tgt_mask, (B, H, T, T), "tgt_key_keep")
    tgt_keep = key_keep_mask("tgt_key_keep", tgt_key_keep, B, T)
    return src, tgt, src_mask, tgt_mask, src_keep, tgt_keep


@checks("encode", Transformer)
def transformer_encode(m, src, src_mask=None, *, src_key_keep=None):
    c = m.config
    src = check_token_ids("src", src, c.src_vocab, c.max_len)
    B, S = src.shape
    keep = key_keep_mask("src_key_keep", src_key_keep, B, S)
    if src_mask is not None:
        src_mask = check_model_mask("src_mask", src_mask, (B, c.num_heads, S, S), "src_key_keep")
    return src, src_mask, keep


@checks("decode", Transformer)
def transformer_decode(m, tgt, memory, src_mask=None, tgt_mask=None, caches=None, offset=0, *,
                       src_key_keep=None):
    c = m.config
    offset = check_offset(offset, caches, c.num_decoder_layers)
    tgt = check_token_ids("tgt", tgt, c.tgt_vocab, c.max_len, offset)
    B, T = tgt.shape
    check_float("memory", memory, dtype=m.dtype, ndim=3, shape=(B, None, c.d_model))
    check_has_keys("memory", memory.shape, 1)
    S = memory.shape[1]
    if src_mask is not None:
        src_mask = check_model_mask("src_mask", src_mask, (B, c.num_heads, T, S), "src_key_keep")
    src_keep = key_keep_mask("src_key_keep", src_key_keep, B, S)
    keys = (offset if caches else 0) + T     # the cached keys (offset), then these T
    if tgt_mask is not None:
        tgt_mask = check_model_mask("tgt_mask", tgt_mask, (B, c.num_heads, T, keys), "a 4-D tgt_mask")
    return tgt, memory, src_mask, tgt_mask, caches, offset, src_keep


# -- the other heads --------------------------------------------------------------------------------------
@checks("call", EncoderClassifier)
def classifier_call(m, src, src_mask=None, *, src_key_keep=None):
    c = m.config
    src = check_token_ids("src", src, c.vocab_size, c.max_len)
    B, S = src.shape
    if src_mask is not None:
        src_mask = check_model_mask("src_mask", src_mask, (B, c.num_heads, S, S), "src_key_keep")
    return src, src_mask, key_keep_mask("src_key_keep", src_key_keep, B, S)


@checks("call", CausalLM)
def causal_lm_call(m, ids, mask=None, caches=None, offset=0, *, key_keep=None):
    c = m.config
    offset = check_offset(offset, caches, c.num_decoder_layers)
    ids = check_token_ids("ids", ids, c.vocab_size, c.max_len, offset)
    B, T = ids.shape
    keys = (offset if caches else 0) + T     # the cached keys (offset), then these T
    if mask is not None:
        mask = check_model_mask("mask", mask, (B, c.num_heads, T, keys), "key_keep")
    return ids, mask, caches, offset, key_keep_mask("key_keep", key_keep, B, keys)


def attention_keep(attention_mask, ids: np.ndarray, num_heads: int):
    """BERT's attention_mask as a bool keep-mask: (B, T) 0/1 or bool (1 = real token, Hugging Face's
    sense) becomes (B, 1, 1, T); a 4-d keep-mask broadcastable to (B, H, T, T) is used as it is;
    None stays None (the model then masks pad_id)."""
    B, T = ids.shape
    if attention_mask is None:
        return None
    m = attention_mask if isinstance(attention_mask, np.ndarray) else np.asarray(attention_mask)
    if m.ndim == 2:
        if m.shape != (B, T):
            raise ValueError(f"attention_mask: expected shape ({B}, {T}) (input_ids' shape, 1 = "
                             f"real token), got {m.shape}")
        return check_mask("attention_mask", m[:, None, None, :], (B, num_heads, T, T))
    if m.ndim == 4:
        return check_mask("attention_mask", m, (B, num_heads, T, T))
    raise ValueError(f"attention_mask: expected (B, T) = ({B}, {T}) or a 4-d keep-mask "
                     f"broadcastable to ({B}, {num_heads}, {T}, {T}), got {describe(m)}")


def check_token_types(token_type_ids, ids: np.ndarray, type_vocab_size: int) -> np.ndarray | None:
    """Segment ids (B, T) in [0, type_vocab_size); None stays None (all 0, as Hugging Face)."""
    if token_type_ids is None:
        return None
    if not type_vocab_size:
        raise ValueError("token_type_ids: this model has no segment embedding "
                         "(config.type_vocab_size=0); expected None")
    tt = check_ids("token_type_ids", token_type_ids, type_vocab_size, ndim=2)
    if tt.shape != ids.shape:
        raise ValueError(f"token_type_ids: expected input_ids' shape {ids.shape}, got {tt.shape}")
    return tt


@checks("call", BertModel, BertForMaskedLM, BertForSequenceClassification)
def bert_call(m, input_ids, token_type_ids=None, attention_mask=None):
    c = m.config
    ids = check_token_ids("input_ids", input_ids, c.vocab_size, c.max_len)
    types = check_token_types(token_type_ids, ids, c.type_vocab_size)
    return ids, types, attention_keep(attention_mask, ids, c.num_heads)


@checks("call", Pooler)
def pooler_call(m, h):
    return (check_float("h", h, dtype=m.dtype, ndim=3, shape=(None, None, m.d_model)),)


@checks("backward", Pooler)
def pooler_backward(m, dpooled):
    return (check_grad("dpooled", dpooled, m._cache[0].y, finite=outermost_backward()),)        # (TanhCache, h's shape)


@checks("backward", *HEADS)
def logits_backward(m, dlogits):
    return (check_grad("dlogits", dlogits, m._cache[-1], finite=outermost_backward()),)


@checks("backward", BertModel)
def bert_backward(m, dhidden, dpooled=None):
    h, pooled = m._cache
    if dhidden is None and dpooled is None:
        raise ValueError("BertModel.backward: expected dhidden, dpooled or both, got neither")
    if dhidden is not None:
        check_grad("dhidden", dhidden, h, finite=outermost_backward())
    if dpooled is not None and pooled is None:
        raise ValueError("dpooled: this BertModel has no pooler (pooler=False); expected None")
    if dpooled is not None:
        check_grad("dpooled", dpooled, pooled, finite=outermost_backward())
    return dhidden, dpooled
