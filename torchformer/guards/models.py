"""The guards of torchformer.models (the twin of npformer.guards.models): the constructor and call
checks of the encoder and decoder layers and stacks, CausalLM, EncoderClassifier, the BERT models and Transformer,
and Transformer's "encode" and "decode" checks. Each returns its method's arguments with token ids as
int64 on the model's device and the masks as bool keep-masks on it.
"""
from __future__ import annotations

import numpy as np
import torch

from npformer.guards.rules import check_cache_list, check_has_keys, check_training_mode
from torchformer.guards.register import checks
from torchformer.guards.validation import (
    check_config,
    check_config_fits_memory,
    check_count,
    check_device_arg,
    check_dtype,
    check_flag,
    check_float,
    check_ids,
    check_key_keep_shape,
    check_length,
    check_mask,
    check_model_mask_shape,
    check_positive_int,
    check_seed,
    describe,
    param_device,
    param_dtype,
)
from torchformer.layers.masks import padding_mask
from torchformer.models.bert import BertForMaskedLM, BertForSequenceClassification, BertModel, Pooler
from torchformer.models.causal_lm import CausalLM
from torchformer.models.classifier import EncoderClassifier
from torchformer.models.decoder import Decoder, DecoderLayer
from torchformer.models.encoder import Encoder, EncoderLayer
from torchformer.models.transformer import ModelMixin, Transformer, and_masks, target_self_mask

HEADS = (Transformer, EncoderClassifier, CausalLM, BertForMaskedLM, BertForSequenceClassification)


# -- constructors -------------------------------------------------------------------------------------
@checks("init", EncoderLayer, Encoder)
def stack_init(config, rng=None, device=None):
    check_config("config", config)
    check_device_arg("device", device)


@checks("init", DecoderLayer, Decoder)
def decoder_init(config, cross_attention=True, rng=None, device=None):
    check_config("config", config)
    check_device_arg("device", device)
    check_flag("cross_attention", cross_attention)


@checks("init", *HEADS)
def model_init(config, seed=0, device=None):
    check_config("config", config)
    check_seed(seed)
    check_config_fits_memory("config", config)
    check_device_arg("device", device)


@checks("init", BertModel)
def bert_init(config, seed=0, pooler=True, device=None, rng=None):
    model_init(config, seed, device)
    check_flag("pooler", pooler)


@checks("init", Pooler)
def pooler_init(d_model, dtype="float32", rng=None, device=None):
    check_positive_int("d_model", d_model)
    check_dtype("dtype", dtype)


# -- mask, id and cache arguments -----------------------------------------------------------------------
def shape_of(mask) -> tuple:
    return tuple(mask.shape) if hasattr(mask, "shape") else tuple(np.shape(mask))


def check_model_mask(name: str, mask, target, keep_arg: str, device=None):
    """A model's attention-mask argument (as npformer.guards.models.check_model_mask): 4-D (batch,
    heads, q_len, k_len) or 2-D (q_len, k_len); rank 1 or 3, and a 2-D mask whose first axis is the
    batch size (> 1), are refused as ambiguous. Returns a bool tensor on `device` (not broadcast)."""
    if mask is None:
        return None
    check_model_mask_shape(name, shape_of(mask), target[0], keep_arg)
    return check_mask(name, mask, target, device=device)


def key_keep_mask(name: str, keep, batch: int, k_len: int, device=None):
    """A (batch, k_len) key keep-mask (True = real token; the negation of torch's key_padding_mask)
    as a (batch, 1, 1, k_len) attention keep-mask; None stays None."""
    if keep is None:
        return None
    check_key_keep_shape(name, shape_of(keep), batch, k_len)
    return check_mask(name, keep, (batch, k_len), device=device)[:, None, None, :]


def check_token_ids(name: str, ids, vocab_size: int, max_len: int, offset: int = 0,
                    device=None) -> torch.Tensor:
    """Integer ids (B, T), 1 <= T, every id in [0, vocab_size), offset + T <= max_len; int64 on
    `device` (numpy arrays are accepted)."""
    ids = check_ids(name, ids, vocab_size, ndim=2, device=device)
    if ids.shape[0] < 1 or ids.shape[1] < 1:
        raise ValueError(f"{name}: expected a non-empty (batch, seq) array, got shape "
                         f"{tuple(ids.shape)}")
    check_length(name, offset + ids.shape[1], max_len)
    return ids


def cached_length(cache) -> int:
    """Positions already in a layer cache {"self": {"k": (B, H, Tpast, dk), ...}, "cross": {...}}."""
    if cache is None:
        return 0
    if not isinstance(cache, dict):
        raise TypeError(f"cache: expected a dict {{'self': {{...}}, 'cross': {{...}}}} (or None), "
                        f"got {type(cache).__name__}")
    self_cache = cache.get("self") or {}
    return self_cache["k"].shape[2] if "k" in self_cache else 0


def check_offset(offset, caches, num_layers: int) -> int:
    """The number of earlier positions of an incremental decode; must match what the caches hold,
    a list of one cache dict per decoder layer (or None)."""
    check_cache_list(caches, num_layers)
    offset = check_count("offset", offset)
    held = cached_length(caches[0]) if caches else offset
    if held != offset:
        raise ValueError(f"offset: expected {held} (the positions the caches hold), got {offset}")
    return offset


def check_cache_batch(caches, batch: int) -> None:
    """The caches of an incremental decode hold keys for this call's batch."""
    for cache in caches or ():
        for part in (cache.get("self") or {}, cache.get("cross") or {}):
            if "k" in part and part["k"].shape[0] != batch:
                raise ValueError(f"cache: holds keys for batch {part['k'].shape[0]}, query has "
                                 f"batch {batch}")


# -- calls ----------------------------------------------------------------------------------------------


@checks("call", EncoderLayer, Encoder)
def encoder_call(m, x, mask=None):
    c = m.config
    check_float("x", x, dtype=param_dtype(m, m.dtype), device=param_device(m), ndim=3,
                shape=(None, None, c.d_model))
    check_has_keys("x", x.shape, 1)
    B, T, _ = x.shape
    return x, check_mask("mask", mask, (B, c.num_heads, T, T), device=x.device)


def decoder_inputs(m, x, memory, self_mask, memory_mask, past: int):
    """The checks DecoderLayer and Decoder share; the bool masks on x's device. `past` cached
    positions widen the self-attention mask to (T, past + T)."""
    c = m.config
    dtype = param_dtype(m, m.dtype)
    check_float("x", x, dtype=dtype, device=param_device(m), ndim=3,
                shape=(None, None, c.d_model))
    B, T, _ = x.shape
    if m.cross_attention:
        if memory is None:
            raise ValueError(f"memory: {type(m).__name__} with cross_attention=True needs the "
                             f"encoder output (B, S, {c.d_model}), got None")
        check_float("memory", memory, dtype=dtype, device=x.device, ndim=3,
                    shape=(B, None, c.d_model))
        check_has_keys("memory", memory.shape, 1)
        memory_mask = check_mask("memory_mask", memory_mask, (B, c.num_heads, T, memory.shape[1]),
                                 device=x.device)
    else:
        if memory is not None:
            raise ValueError(f"memory: {type(m).__name__} with cross_attention=False takes no "
                             f"memory, got {type(memory).__name__}")
        if memory_mask is not None:
            raise ValueError(f"memory_mask: {type(m).__name__} with cross_attention=False takes "
                             f"no memory_mask, got {type(memory_mask).__name__}")
    if past + T == 0:
        check_has_keys("x", x.shape, 1)
    self_mask = check_mask("self_mask", self_mask, (B, c.num_heads, T, past + T), device=x.device)
    return self_mask, memory_mask


@checks("call", DecoderLayer)
def decoder_layer_call(m, x, memory=None, self_mask=None, memory_mask=None, cache=None):
    past = cached_length(cache)
    self_mask, memory_mask = decoder_inputs(m, x, memory, self_mask, memory_mask, past)
    return x, memory, self_mask, memory_mask, cache


@checks("call", Decoder)
def decoder_call(m, x, memory=None, self_mask=None, memory_mask=None, caches=None):
    check_cache_list(caches, len(m.layers))
    past = cached_length(caches[0]) if caches else 0
    self_mask, memory_mask = decoder_inputs(m, x, memory, self_mask, memory_mask, past)
    return x, memory, self_mask, memory_mask, caches


@checks("call", CausalLM)
def causal_lm_call(m, ids, mask=None, caches=None, offset=0, key_keep=None):
    c = m.config
    offset = check_offset(offset, caches, c.num_decoder_layers)
    ids = check_token_ids("ids", ids, c.vocab_size, c.max_len, offset, device=m.device)
    B, T = ids.shape
    check_cache_batch(caches, B)
    keys = (offset if caches else 0) + T     # the cached keys (offset), then these T
    if mask is not None:
        mask = check_model_mask("mask", mask, (B, c.num_heads, T, keys), "key_keep",
                                device=ids.device)
    return ids, mask, caches, offset, key_keep_mask("key_keep", key_keep, B, keys,
                                                    device=ids.device)


@checks("call", EncoderClassifier)
def classifier_call(m, src, src_mask=None, src_key_keep=None):
    c = m.config
    src = check_token_ids("src", src, c.vocab_size, c.max_len, device=m.device)
    B, S = src.shape
    if src_mask is not None:
        src_mask = check_model_mask("src_mask", src_mask, (B, c.num_heads, S, S), "src_key_keep",
                                    device=src.device)
    return src, src_mask, key_keep_mask("src_key_keep", src_key_keep, B, S, device=src.device)


@checks("call", Pooler)
def pooler_call(m, h):
    check_float("h", h, dtype=m.dense.weight.dtype, device=m.dense.weight.device, ndim=3, shape=(None, None, m.d_model))
    return (h,)


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


@checks("call", BertModel, BertForMaskedLM, BertForSequenceClassification)
def bert_call(m, input_ids, token_type_ids=None, attention_mask=None):
    """(ids, token types, keep-mask) checked and on the model's device."""
    c = m.config
    ids = check_token_ids("input_ids", input_ids, c.vocab_size, c.max_len, device=m.device)
    types = check_token_types(token_type_ids, ids, c.type_vocab_size)
    return ids, types, attention_keep(attention_mask, ids, c.pad_id, c.num_heads)


def source_mask(m, src: torch.Tensor, src_mask, T: int | None = None, src_key_keep=None):
    """The encoder's keep-mask: src_mask checked (or padding from pad_id), src_key_keep folded in;
    with T, src_mask must also fit the decoder's cross-attention (T, S)."""
    B, S = src.shape
    H = m.config.num_heads
    keep = key_keep_mask("src_key_keep", src_key_keep, B, S, device=src.device)
    if src_mask is None:
        pad = m.config.pad_id
        return and_masks(None if pad is None else padding_mask(src, pad), keep)
    src_mask = check_model_mask("src_mask", src_mask, (B, H, S, S), "src_key_keep", device=src.device)
    if T is not None:
        check_mask("src_mask", src_mask, (B, H, T, S))
    return and_masks(src_mask, keep)


@checks("encode", Transformer)
def transformer_encode(m, src, src_mask=None, *, src_key_keep=None):
    c = m.config
    src = check_token_ids("src", src, c.src_vocab, c.max_len, device=m.device)
    return src, source_mask(m, src, src_mask, src_key_keep=src_key_keep)


@checks("decode", Transformer)
def transformer_decode(m, tgt, memory, src_mask=None, tgt_mask=None, caches=None, offset=0, *,
                       src_key_keep=None):
    c = m.config
    offset = check_offset(offset, caches, c.num_decoder_layers)
    tgt = check_token_ids("tgt", tgt, c.tgt_vocab, c.max_len, offset, device=m.device)
    B, T = tgt.shape
    check_cache_batch(caches, B)
    check_float("memory", memory, dtype=m._weight_dtype, device=param_device(m), ndim=3,
                shape=(B, None, c.d_model))
    check_has_keys("memory", memory.shape, 1)
    if src_mask is not None:
        src_mask = check_model_mask("src_mask", src_mask, (B, c.num_heads, T, memory.shape[1]),
                                    "src_key_keep", device=tgt.device)
    src_mask = and_masks(src_mask, key_keep_mask("src_key_keep", src_key_keep, B,
                                                 memory.shape[1], device=tgt.device))
    if tgt_mask is None:
        tgt_mask = target_self_mask(tgt, c.pad_id, offset, caches)       # (B, 1, T, past + T)
    else:
        keys = (offset if caches else 0) + T     # the cached keys (offset), then these T
        tgt_mask = check_model_mask("tgt_mask", tgt_mask, (B, c.num_heads, T, keys),
                                    "a 4-D tgt_mask", device=tgt.device)
    return tgt, memory, src_mask, tgt_mask, caches, offset


@checks("call", Transformer)
def transformer_call(m, src, tgt, src_mask=None, tgt_mask=None, *, src_key_keep=None,
                     tgt_key_keep=None):
    c = m.config
    src = check_token_ids("src", src, c.src_vocab, c.max_len, device=m.device)
    tgt = check_token_ids("tgt", tgt, c.tgt_vocab, c.max_len, device=m.device)
    B, T = src.shape[0], tgt.shape[1]
    if tgt.shape[0] != B:
        raise ValueError(f"tgt: expected batch size {B} (src's), got shape {tuple(tgt.shape)}")
    src_mask = source_mask(m, src, src_mask, T, src_key_keep)            # (B,1,1,S) or given
    if tgt_mask is None:
        tgt_mask = target_self_mask(tgt, c.pad_id)                       # (B, 1, T, T)
    else:
        tgt_mask = check_model_mask("tgt_mask", tgt_mask, (B, c.num_heads, T, T), "tgt_key_keep",
                                    device=tgt.device)
    tgt_mask = and_masks(tgt_mask, key_keep_mask("tgt_key_keep", tgt_key_keep, B, T,
                                                 device=tgt.device))
    return src, tgt, src_mask, tgt_mask


_model_train = ModelMixin.train                # the models' one-pass train(), after the mode check


def model_train(self, mode=True):
    """The models' train() (Transformer, CausalLM, the classifiers, BERT) after npformer's mode check:
    their own raised torch's words."""
    return _model_train(self, check_training_mode(self, mode))


ModelMixin.train = model_train
