"""The guards of npformer.layers: each layer's constructor, call and upstream-gradient checks.

A "call" guard returns forward's arguments as forward expects them (a keep-mask as bool, ids as an
array); the layer's math then runs on them without checking anything again.
"""
from __future__ import annotations

import numpy as np

from npformer.guards.register import checks, outermost_backward
from npformer.guards.rules import (
    check_activation,
    check_flag,
    check_has_keys,
    check_real,
    check_training_mode,
    random_kind,
)
from npformer.guards.validation import (
    check_dtype,
    check_float,
    check_grad,
    check_ids,
    check_length,
    check_mask,
    check_positive_int,
    check_probability,
    check_rng,
)
from npformer.layers.activations import Activation
from npformer.layers.attention import MultiHeadAttention
from npformer.layers.dropout import Dropout
from npformer.layers.embedding import Embedding
from npformer.layers.feedforward import PositionwiseFeedForward
from npformer.layers.layernorm import LayerNorm
from npformer.layers.linear import Linear
from npformer.layers.loss import CrossEntropyLoss
from npformer.layers.module import Module
from npformer.layers.positional import LearnedPositionalEncoding, SinusoidalPositionalEncoding

POSITIONAL = (SinusoidalPositionalEncoding, LearnedPositionalEncoding)


def gradient_of_output(module, dout) -> tuple:
    """The upstream gradient: exactly the shape and dtype of the forward's output (its cache's last
    entry), and finite when the user called this backward (a parent's backward passes gradients it
    computed from a checked one: scanning each again would cost a pass over memory per layer)."""
    return (check_grad("dout", dout, module._cache[-1], finite=outermost_backward()),)


checks("backward", Linear, Activation, LayerNorm, Dropout, Embedding, *POSITIONAL, MultiHeadAttention,
       PositionwiseFeedForward)(gradient_of_output)


# -- Linear -------------------------------------------------------------------------------------------
@checks("init", Linear)
def linear_init(in_features, out_features, bias=True, dtype="float32", rng=None):
    check_positive_int("in_features", in_features)
    check_positive_int("out_features", out_features)
    check_flag("bias", bias)
    check_dtype("dtype", dtype)
    check_rng("rng", rng)


@checks("call", Linear)
def linear_call(m, x):
    if isinstance(x, np.ndarray) and x.ndim == 0:
        raise ValueError(f"x: expected at least 1 dimension (..., {m.in_features}), got a 0-d array")
    check_float("x", x, dtype=m.dtype)
    if x.shape[-1] != m.in_features:
        raise ValueError(f"x: expected last dimension {m.in_features} (in_features), got shape "
                         f"{x.shape}")
    return (x,)


# -- elementwise: Activation, Dropout -----------------------------------------------------------------
@checks("init", Activation)
def activation_init(name):
    check_activation("Activation: name", name)


@checks("call", Activation, Dropout)
def any_float_call(m, x):
    return (check_float("x", x),)


@checks("init", Dropout)
def dropout_init(p, rng=None):
    check_probability("p", p)
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng: expected a numpy.random.Generator or None, got {random_kind(rng)}")


# -- LayerNorm ----------------------------------------------------------------------------------------
@checks("init", LayerNorm)
def layernorm_init(d_model, eps=1e-5, dtype="float32"):
    check_positive_int("d_model", d_model)
    check_real("LayerNorm: eps", eps, positive=True)
    check_dtype("dtype", dtype)


@checks("call", LayerNorm)
def layernorm_call(m, x):
    check_float("x", x, dtype=m.dtype)
    if x.ndim == 0 or x.shape[-1] != m.d_model:
        raise ValueError(f"x: expected last dimension {m.d_model} (d_model), got shape {x.shape}")
    return (x,)


# -- Embedding, positional encodings -------------------------------------------------------------------
@checks("init", Embedding)
def embedding_init(num_embeddings, embedding_dim, padding_idx=None, scale=1.0, dtype="float32",
                   rng=None):
    check_positive_int("num_embeddings", num_embeddings)
    check_positive_int("embedding_dim", embedding_dim)
    if padding_idx is not None and (isinstance(padding_idx, bool)
                                    or not isinstance(padding_idx, (int, np.integer))
                                    or not 0 <= padding_idx < num_embeddings):
        raise ValueError(f"Embedding: padding_idx: expected None or an int in [0, {num_embeddings}), "
                         f"got {padding_idx!r}")
    check_real("Embedding: scale", scale)
    check_dtype("dtype", dtype)


@checks("call", Embedding)
def embedding_call(m, ids):
    return (check_ids("ids", ids, m.num_embeddings, ndim=None),)


@checks("init", *POSITIONAL)
def positional_init(d_model, max_len=512, dtype="float32", rng=None):
    check_positive_int("d_model", d_model)
    check_positive_int("max_len", max_len)
    check_dtype("dtype", dtype)


@checks("call", *POSITIONAL)
def positional_call(m, x, offset=0):
    check_float("x", x, dtype=m.dtype, ndim=3, shape=(None, None, m.d_model))
    if isinstance(offset, bool) or not isinstance(offset, (int, np.integer)) or offset < 0:
        raise ValueError(f"offset: expected a non-negative int, got {offset!r}")
    check_length("x" if not offset else "offset + x.shape[1]", int(offset) + x.shape[1], m.max_len)
    return x, int(offset)


# -- attention, feed-forward --------------------------------------------------------------------------
@checks("init", MultiHeadAttention)
def attention_init(d_model, num_heads, dropout=0.0, bias=True, dtype="float32", rng=None):
    for name, v in (("d_model", d_model), ("num_heads", num_heads)):
        check_positive_int(f"MultiHeadAttention: {name}", v)       # NumPy's ints too, as Linear
    if d_model % num_heads:
        raise ValueError(f"MultiHeadAttention: d_model: expected a multiple of num_heads="
                         f"{num_heads}, got {d_model}")
    check_flag("bias", bias)
    check_dtype("dtype", dtype)
    check_probability("dropout", dropout)


def key_or_value(m, name: str, x, B: int) -> None:
    check_float(name, x, dtype=m.dtype, ndim=3)
    if x.shape[0] != B or x.shape[2] != m.d_model:
        raise ValueError(f"{name}: expected shape ({B}, Tk, {m.d_model}), got {x.shape}")


@checks("call", MultiHeadAttention)
def attention_call(m, query, key, value, mask=None, cache=None, static_kv=False):
    check_float("query", query, dtype=m.dtype, ndim=3)
    B, Tq, D = query.shape
    if D != m.d_model:
        raise ValueError(f"query: expected shape (B, Tq, {m.d_model}), got {query.shape}")
    if cache is not None and not isinstance(cache, dict):
        raise TypeError(f"cache: expected a dict (or None), got {type(cache).__name__}")
    reuse_kv = cache is not None and static_kv and "k" in cache
    if not reuse_kv:
        key_or_value(m, "key", key, B)
        key_or_value(m, "value", value, B)
        if value.shape != key.shape:
            raise ValueError(f"value: expected the key's shape {key.shape}, got {value.shape}")
    past = 0 if cache is None or static_kv or "k" not in cache else cache["k"].shape[2]
    if cache is not None and "k" in cache and cache["k"].shape[0] != B:
        raise ValueError(f"cache: holds keys for batch {cache['k'].shape[0]}, query has batch {B}")
    Tk = cache["k"].shape[2] if reuse_kv else past + key.shape[1]
    if Tk == 0:
        check_has_keys("key", key.shape, 1)
    keep = check_mask("mask", mask, (B, m.num_heads, Tq, Tk))
    return query, key, value, keep, cache, static_kv


@checks("init", PositionwiseFeedForward)
def feedforward_init(d_model, d_ff, activation="relu", dropout=0.0, bias=True, dtype="float32",
                     rng=None):
    check_positive_int("PositionwiseFeedForward: d_model", d_model)
    check_positive_int("PositionwiseFeedForward: d_ff", d_ff)
    check_activation("PositionwiseFeedForward: activation", activation)
    check_probability("dropout", dropout)
    check_flag("bias", bias)


@checks("call", PositionwiseFeedForward)
def feedforward_call(m, x):
    return (check_float("x", x, dtype=m.dtype, ndim=3, shape=(None, None, m.d_model)),)


# -- loss ----------------------------------------------------------------------------------------------
@checks("init", CrossEntropyLoss)
def loss_init(ignore_index=-100, label_smoothing=0.0):
    if isinstance(ignore_index, bool) or not isinstance(ignore_index, (int, np.integer)):
        raise TypeError(f"ignore_index: expected an int, got {ignore_index!r}")
    if (isinstance(label_smoothing, bool)
            or not isinstance(label_smoothing, (int, float, np.integer, np.floating))
            or not 0.0 <= label_smoothing <= 1.0):
        raise ValueError(f"label_smoothing: expected a float in [0, 1], got {label_smoothing!r}")


def check_targets(targets, num_classes: int, ignore_index: int, n_rows: int) -> np.ndarray:
    """Class indices (n_rows,) in [0, num_classes) or ignore_index, at least one of them counted."""
    if not isinstance(targets, np.ndarray):
        targets = np.asarray(targets)
    if targets.dtype == np.bool_ or not np.issubdtype(targets.dtype, np.integer):
        raise TypeError(f"targets: expected integer class indices, got dtype {targets.dtype}")
    if targets.shape != (n_rows,):
        raise ValueError(f"targets: expected shape ({n_rows},), got {targets.shape}")
    bad = (targets != ignore_index) & ((targets < 0) | (targets >= num_classes))
    if bad.any():
        raise ValueError(f"targets: expected class indices in [0, {num_classes}) or "
                         f"ignore_index={ignore_index}, got {targets[bad][:5].tolist()}")
    if not (targets != ignore_index).any():
        raise ValueError(f"targets: every target equals ignore_index={ignore_index}; the mean over "
                         f"zero counted targets is undefined (torch would return NaN)")
    return targets


@checks("call", CrossEntropyLoss)
def loss_call(m, logits, targets):
    check_float("logits", logits)
    if logits.ndim == 0:
        raise ValueError("logits: expected shape (..., C), got a 0-d array")
    targets = np.asarray(targets)
    if targets.shape != logits.shape[:-1]:
        raise ValueError(f"targets: expected shape {logits.shape[:-1]} (logits' leading "
                         f"dimensions), got {targets.shape}")
    C = logits.shape[-1]
    check_targets(targets.reshape(-1), C, m.ignore_index, targets.size)
    return logits, targets


@checks("backward", CrossEntropyLoss)
def loss_backward(m, dout=1.0):
    loss = m._cache[-1]
    if isinstance(dout, np.generic):
        dout = np.asarray(dout)                                # numpy scalar: dtype checked
    elif isinstance(dout, (int, float)) and not isinstance(dout, bool):
        dout = np.asarray(dout, dtype=loss.dtype)              # the usual call: backward()
    return (check_grad("dout", dout, loss, finite=True),)     # a scalar: the check costs nothing


@checks("train", Module)
def training_mode(module, mode=True) -> bool:
    """Module.train's mode: a bool (NumPy's too), as torch.nn.Module.train requires."""
    return check_training_mode(module, mode)
