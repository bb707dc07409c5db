"""The guards of torchformer.models: the call checks of the encoder and decoder layers and stacks,
CausalLM and EncoderClassifier (the twin of npformer.guards.models). Each returns forward's arguments
with token ids as int64 on the model's device and the masks as bool keep-masks on it.
"""
from __future__ import annotations

from torchformer.guards.register import checks
from torchformer.layers.masks import check_model_mask, key_keep_mask
from torchformer.layers.validation import check_float, check_mask, param_dtype
from torchformer.models.causal_lm import CausalLM
from torchformer.models.classifier import EncoderClassifier
from torchformer.models.decoder import Decoder, DecoderLayer, cached_length
from torchformer.models.encoder import Encoder, EncoderLayer
from torchformer.models.transformer import check_offset, check_token_ids


@checks("call", EncoderLayer, Encoder)
def encoder_call(m, x, mask=None):
    c = m.config
    check_float("x", x, dtype=param_dtype(m, m.dtype), ndim=3, shape=(None, None, c.d_model))
    B, T, _ = x.shape
    return x, check_mask("mask", mask, (B, c.num_heads, T, T), device=x.device)


def decoder_inputs(m, x, memory, self_mask, memory_mask, past: int):
    """The checks DecoderLayer and Decoder share; the bool masks on x's device. `past` cached
    positions widen the self-attention mask to (T, past + T)."""
    c = m.config
    dtype = param_dtype(m, m.dtype)
    check_float("x", x, dtype=dtype, ndim=3, shape=(None, None, c.d_model))
    B, T, _ = x.shape
    if m.cross_attention:
        if memory is None:
            raise ValueError(f"memory: {type(m).__name__} with cross_attention=True needs the "
                             f"encoder output (B, S, {c.d_model}), got None")
        check_float("memory", memory, dtype=dtype, ndim=3, shape=(B, None, c.d_model))
        memory_mask = check_mask("memory_mask", memory_mask, (B, c.num_heads, T, memory.shape[1]),
                                 device=x.device)
    else:
        if memory is not None:
            raise ValueError(f"memory: {type(m).__name__} with cross_attention=False takes no "
                             f"memory, got {type(memory).__name__}")
        if memory_mask is not None:
            raise ValueError(f"memory_mask: {type(m).__name__} with cross_attention=False takes "
                             f"no memory_mask, got {type(memory_mask).__name__}")
    self_mask = check_mask("self_mask", self_mask, (B, c.num_heads, T, past + T), device=x.device)
    return self_mask, memory_mask


@checks("call", DecoderLayer)
def decoder_layer_call(m, x, memory=None, self_mask=None, memory_mask=None, cache=None):
    past = cached_length(cache)
    self_mask, memory_mask = decoder_inputs(m, x, memory, self_mask, memory_mask, past)
    return x, memory, self_mask, memory_mask, cache


@checks("call", Decoder)
def decoder_call(m, x, memory=None, self_mask=None, memory_mask=None, caches=None):
    if caches is not None and (not isinstance(caches, list) or len(caches) != len(m.layers)):
        got = len(caches) if isinstance(caches, list) else type(caches).__name__
        raise ValueError(f"caches: expected a list of {len(m.layers)} dicts (one per layer), "
                         f"got {got}")
    past = cached_length(caches[0]) if caches else 0
    self_mask, memory_mask = decoder_inputs(m, x, memory, self_mask, memory_mask, past)
    return x, memory, self_mask, memory_mask, caches


@checks("call", CausalLM)
def causal_lm_call(m, ids, mask=None, caches=None, offset=0, key_keep=None):
    c = m.config
    offset = check_offset(offset, caches, c.num_decoder_layers)
    ids = check_token_ids("ids", ids, c.vocab_size, c.max_len, offset, device=m.device)
    B, T = ids.shape
    if mask is not None:
        mask = check_model_mask("mask", mask, (B, c.num_heads, T, offset + T), "key_keep",
                                device=ids.device)
    return ids, mask, caches, offset, key_keep_mask("key_keep", key_keep, B, offset + T,
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
