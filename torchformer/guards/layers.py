"""The guards of torchformer.layers: each layer's constructor and call checks (the twin of
npformer.guards.layers).

An "init" guard takes the constructor's arguments and raises on a bad one before anything is built. A
"call" guard returns forward's arguments as forward expects them (a keep-mask as a bool tensor on
the input's device, ids as an int64 tensor on the weight's); the layer's math then runs on them
without checking anything again. Messages name the argument, what was expected and what came.
"""
from __future__ import annotations

import numpy as np
import torch

from npformer.guards.rules import (
    check_activation,
    check_flag,
    check_has_keys,
    check_real,
    check_training_mode,
    random_kind,
)
from npformer.guards.state import check_state_dict
from torchformer.guards.register import checks
from torchformer.guards.validation import (
    check_count,
    check_device_arg,
    check_dtype,
    check_float,
    check_ids,
    check_length,
    check_mask,
    check_positive_int,
    check_probability,
    check_rng,
)
from torchformer.layers.activations import Activation
from torchformer.layers.attention import MultiHeadAttention
from torchformer.layers.dropout import Dropout
from torchformer.layers.embedding import Embedding
from torchformer.layers.feedforward import PositionwiseFeedForward
from torchformer.layers.layernorm import LayerNorm
from torchformer.layers.linear import Linear
from torchformer.layers.loss import CrossEntropyLoss
from torchformer.layers.module import Module, StrictLoad
from torchformer.layers.positional import LearnedPositionalEncoding, SinusoidalPositionalEncoding

POSITIONAL = (SinusoidalPositionalEncoding, LearnedPositionalEncoding)


# -- constructors -------------------------------------------------------------------------------------
@checks("init", Linear)
def linear_init(in_features, out_features, bias=True, dtype="float32", rng=None, device=None):
    check_device_arg("device", device)
    check_positive_int("in_features", in_features)
    check_positive_int("out_features", out_features)
    check_flag("bias", bias)
    check_rng("rng", rng)
    check_dtype("dtype", dtype)


@checks("init", LayerNorm)
def layernorm_init(d_model, eps=1e-5, dtype="float32", device=None):
    check_device_arg("device", device)
    check_positive_int("d_model", d_model)
    check_real("LayerNorm: eps", eps, positive=True)
    check_dtype("dtype", dtype)


@checks("init", Activation)
def activation_init(name):
    check_activation("Activation: name", name)


@checks("init", Dropout)
def dropout_init(p=0.1, rng=None):
    check_probability("p", p)
    if rng is not None and not isinstance(rng, torch.Generator):
        raise TypeError(f"rng: expected a torch.Generator or None, got {random_kind(rng)}")


@checks("init", Embedding)
def embedding_init(num_embeddings, embedding_dim, padding_idx=None, scale=1.0, dtype="float32",
                   rng=None, device=None):
    check_device_arg("device", device)
    check_positive_int("num_embeddings", num_embeddings)
    check_positive_int("embedding_dim", embedding_dim)
    if padding_idx is not None and (isinstance(padding_idx, bool)
                                    or not isinstance(padding_idx, (int, np.integer))
                                    or not 0 <= padding_idx < num_embeddings):
        raise ValueError(f"Embedding: padding_idx: expected None or an int in "
                         f"[0, {num_embeddings}), got {padding_idx!r}")
    check_real("Embedding: scale", scale)
    check_rng("rng", rng)
    check_dtype("dtype", dtype)


@checks("init", SinusoidalPositionalEncoding)
def sinusoidal_init(d_model, max_len=512, dtype="float32", device=None):
    check_device_arg("device", device)
    check_positive_int("d_model", d_model)
    check_positive_int("max_len", max_len)
    check_dtype("dtype", dtype)


@checks("init", LearnedPositionalEncoding)
def learned_init(d_model, max_len=512, dtype="float32", rng=None, device=None):
    check_device_arg("device", device)
    check_positive_int("d_model", d_model)
    check_positive_int("max_len", max_len)
    check_rng("rng", rng)
    check_dtype("dtype", dtype)


@checks("init", MultiHeadAttention)
def attention_init(d_model, num_heads, dropout=0.0, bias=True, dtype="float32", rng=None,
                   device=None, need_weights=False):
    check_device_arg("device", device)
    for name, v in (("d_model", d_model), ("num_heads", num_heads)):
        check_positive_int(f"MultiHeadAttention: {name}", v)       # NumPy's ints too, as Linear
    if d_model % num_heads:
        raise ValueError(f"MultiHeadAttention: d_model: expected a multiple of num_heads="
                         f"{num_heads}, got {d_model}")
    check_flag("bias", bias)
    check_flag("need_weights", need_weights)
    check_rng("rng", rng)
    check_dtype("dtype", dtype)
    check_probability("dropout", dropout)


@checks("init", PositionwiseFeedForward)
def feedforward_init(d_model, d_ff, activation="relu", dropout=0.0, bias=True, dtype="float32",
                     rng=None, device=None):
    check_device_arg("device", device)
    check_positive_int("PositionwiseFeedForward: d_model", d_model)
    check_positive_int("PositionwiseFeedForward: d_ff", d_ff)
    check_activation("PositionwiseFeedForward: activation", activation)
    check_probability("dropout", dropout)
    check_flag("bias", bias)
    check_dtype("dtype", dtype)


@checks("init", CrossEntropyLoss)
def loss_init(ignore_index=-100, label_smoothing=0.0):
    if isinstance(ignore_index, bool) or not isinstance(ignore_index, (int, np.integer)):
        raise TypeError(f"ignore_index: expected an int, got {ignore_index!r}")
    if (isinstance(label_smoothing, bool)
            or not isinstance(label_smoothing, (int, float, np.integer, np.floating))
            or not 0.0 <= label_smoothing <= 1.0):
        raise ValueError(f"label_smoothing: expected a float in [0, 1], got {label_smoothing!r}")


# -- calls --------------------------------------------------------------------------------------------
def last_axis(name: str, x: torch.Tensor, size: int) -> None:
    if x.dim() < 1 or x.shape[-1] != size:
        raise ValueError(f"{name}: expected shape (..., {size}), got {tuple(x.shape)}")


@checks("call", Linear)
def linear_call(m, x):
    check_float("x", x, dtype=m.weight.dtype, device=m.weight.device)
    last_axis("x", x, m.in_features)
    return (x,)


@checks("call", LayerNorm)
def layernorm_call(m, x):
    check_float("x", x, dtype=m.weight.dtype, device=m.weight.device)
    last_axis("x", x, m.d_model)
    return (x,)


@checks("call", Activation, Dropout)
def any_float_call(m, x):
    check_float("x", x)
    return (x,)


@checks("call", Embedding)
def embedding_call(m, ids):
    return (check_ids("ids", ids, m.num_embeddings, ndim=None, device=m.weight.device),)


@checks("call", *POSITIONAL)
def positional_call(m, x, offset=0):
    table = m.pe if isinstance(m, SinusoidalPositionalEncoding) else m.weight
    check_float("x", x, dtype=table.dtype, device=table.device, ndim=3, shape=(None, None, m.d_model))
    offset = check_count("offset", offset)
    check_length("x" if not offset else "offset + x.shape[1]", int(offset) + x.shape[1], m.max_len)
    return x, offset


@checks("call", PositionwiseFeedForward)
def feedforward_call(m, x):
    check_float("x", x, dtype=m.linear1.weight.dtype, device=m.linear1.weight.device, ndim=3,
                shape=(None, None, m.d_model))
    return (x,)


def key_or_value(m, name: str, x, B: int) -> None:
    check_float(name, x, dtype=m.q_proj.weight.dtype, device=m.q_proj.weight.device, ndim=3)
    if x.shape[0] != B or x.shape[2] != m.d_model:
        raise ValueError(f"{name}: expected shape ({B}, Tk, {m.d_model}), got {tuple(x.shape)}")


@checks("call", MultiHeadAttention)
def attention_call(m, query, key, value, mask=None, cache=None, static_kv=False):
    if cache is not None and not isinstance(cache, dict):
        raise TypeError(f"cache: expected a dict (or None), got {type(cache).__name__}")
    check_float("query", query, dtype=m.q_proj.weight.dtype, device=m.q_proj.weight.device,
                ndim=3)
    B, Tq, D = query.shape
    if D != m.d_model:
        raise ValueError(f"query: expected shape (B, Tq, {m.d_model}), got {tuple(query.shape)}")
    if cache is not None and "k" in cache and cache["k"].shape[0] != B:
        raise ValueError(f"cache: holds keys for batch {cache['k'].shape[0]}, query has batch {B}")
    reuse_kv = cache is not None and static_kv and "k" in cache
    if not reuse_kv:
        key_or_value(m, "key", key, B)
        key_or_value(m, "value", value, B)
        if value.shape != key.shape:
            raise ValueError(f"value: expected the key's shape {tuple(key.shape)}, got "
                             f"{tuple(value.shape)}")
    past = 0 if cache is None or static_kv or "k" not in cache else cache["k"].shape[2]
    Tk = cache["k"].shape[2] if reuse_kv else past + key.shape[1]
    if Tk == 0:
        check_has_keys("key", key.shape, 1)
    keep = check_mask("mask", mask, (B, m.num_heads, Tq, Tk), device=query.device)
    return query, key, value, keep, cache, static_kv


@checks("call", CrossEntropyLoss)
def loss_call(m, logits, targets):
    check_float("logits", logits)
    if logits.dim() < 1:
        raise ValueError("logits: expected at least 1 dimension (..., C), got a 0-d tensor")
    if not isinstance(targets, torch.Tensor):
        targets = torch.as_tensor(targets)
    if targets.dtype == torch.bool or targets.dtype.is_floating_point:
        raise TypeError(f"targets: expected integer class indices, got dtype {targets.dtype}")
    C = logits.shape[-1]
    if tuple(targets.shape) != tuple(logits.shape[:-1]):
        raise ValueError(f"targets: expected shape {tuple(logits.shape[:-1])} (logits without "
                         f"its class axis), got {tuple(targets.shape)}")
    targets = targets.to(device=logits.device, dtype=torch.long)
    counted = targets != m.ignore_index
    if targets.numel():
        bad = counted & ((targets < 0) | (targets >= C))
        if bool(bad.any()):
            raise ValueError(f"targets: expected class indices in [0, {C}) or ignore_index="
                             f"{m.ignore_index}, got {targets[bad][:5].tolist()}")
    if not bool(counted.any()):
        raise ValueError(f"targets: every target equals ignore_index={m.ignore_index}; the "
                         f"mean over zero counted targets is undefined (torch would return NaN)")
    return logits, targets


# load_state_dict: npformer's rule and messages (framework-free: names, shapes, dtype names)
checks("load_state_dict", StrictLoad)(check_state_dict)


def checked_train(self, mode=True):
    """nn.Module.train after npformer's mode check: `train("False")` is refused naming the module and
    the value, in npformer's words (torch's own says "training mode is expected to be boolean").
    Every sub-module's flag is set in one pass, as Transformer.train does; a sub-module whose class
    has another train() gets it called."""
    mode = check_training_mode(self, mode)
    todo = [self]
    while todo:
        m = todo.pop()
        m.__dict__["training"] = mode
        for child in m._modules.values():
            if child is None:
                continue
            if type(child).train in (torch.nn.Module.train, checked_train):
                todo.append(child)
            else:
                child.train(mode)                       # its own train(): let it recurse
    return self


Module.train = checked_train
