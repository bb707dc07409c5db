"""The checked public names of the per-layer functional pairs: linear, layernorm, embedding, the
activations (tanh, BERT's pooler, included), softmax and log-softmax, and the backward halves of
dropout and the loss.

`npformer.linear_forward`, `npformer.layernorm_backward`, ... are these. Each checks what it is given
(the message names the argument, what was expected and what came), then runs the plain function of
npformer.layers, which checks nothing. A forward takes float32 or float64 arrays whose sizes fit
together; a backward takes the upstream gradient with the shape and dtype of its forward's output
and the cache that forward returned. Without the checks a wrong width reaches NumPy as a matmul or
broadcasting error, and a negative eps or a NaN input comes back as silent NaN.
"""
from __future__ import annotations

import math

import numpy as np

from npformer.guards.validation import check_float, check_grad, check_ids, describe
from npformer.layers import activations, dropout, embedding, layernorm, linear, loss, softmax
from npformer.layers.embedding import EmbeddingCache
from npformer.layers.layernorm import LayerNormCache
from npformer.layers.linear import LinearCache
from npformer.layers.loss import CrossEntropyCache
from npformer.layers.softmax import LogSoftmaxCache, SoftmaxCache
from npformer.models import bert


def _cache(name: str, cache, kind: type, forward: str):
    """The cache `forward` returned, or a TypeError naming what came instead."""
    if not isinstance(cache, kind):
        raise TypeError(f"cache: expected the {kind.__name__} that {forward} returned, got "
                        f"{type(cache).__name__}")
    return cache


def _grad(dout, shape: tuple, dtype) -> np.ndarray:
    """dout, checked against the forward output's shape and dtype."""
    return check_grad("dout", dout, np.empty(shape, dtype=dtype))


def _backward(plain, forward: str, kind: type, field: str):
    """`plain` (a backward half), checked: `cache` is the `kind` that `forward` returned, and dout has
    the shape and dtype of the cache's `field` (the forward's output, or its input of that shape)."""
    def backward(dout, cache):
        like = getattr(_cache("cache", cache, kind, forward), field)
        _grad(dout, like.shape, like.dtype)
        return plain(dout, cache)
    backward.__name__ = backward.__qualname__ = plain.__name__
    backward.__doc__ = (f"{plain.__module__}.{plain.__name__}, checked: dout like {forward}'s output, "
                        f"cache what {forward} returned.")
    return backward


def _number(name: str, v, *, positive: bool = False) -> float:
    """A finite real number (not a bool), positive when asked."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name}: expected a real number, got {describe(v)}")
    if not math.isfinite(v) or (positive and v <= 0):
        raise ValueError(f"{name}: expected a {'positive ' if positive else ''}finite number, "
                         f"got {v!r}")
    return float(v)


def _axis(axis, ndim: int) -> int:
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"axis: expected an int, got {describe(axis)}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis: expected an int in [{-ndim}, {ndim}) for x of shape "
                         f"({ndim} dimensions), got {axis}")
    return int(axis)


# -- linear ----------------------------------------------------------------------------------------
def linear_forward(x, W, b):
    """npformer.layers.linear.linear_forward, checked: x (..., I), W (O, I), b (O,) or None, one
    float dtype."""
    x = check_float("x", x)
    if x.ndim < 1:
        raise ValueError(f"x: expected at least 1 dimension (..., in_features), got shape {x.shape}")
    W = check_float("W", W, dtype=x.dtype, ndim=2, owner="x's")
    if W.shape[1] != x.shape[-1]:
        raise ValueError(f"W: expected shape (out_features, {x.shape[-1]}) to match x's last "
                         f"dimension, got {W.shape}")
    if b is not None:
        check_float("b", b, dtype=x.dtype, shape=(W.shape[0],), owner="x's")
    return linear.linear_forward(x, W, b)


def linear_backward(dout, cache):
    """npformer.layers.linear.linear_backward, checked: dout (..., O) like the forward's output."""
    x, W, _ = _cache("cache", cache, LinearCache, "linear_forward")
    _grad(dout, x.shape[:-1] + (W.shape[0],), np.result_type(x, W))
    return linear.linear_backward(dout, cache)


# -- layernorm -------------------------------------------------------------------------------------
def layernorm_forward(x, gamma, beta, eps: float = 1e-5):
    """npformer.layers.layernorm.layernorm_forward, checked: x (..., D), gamma and beta (D,) of x's
    dtype, eps a positive finite number (a negative one gives NaN for constant rows)."""
    x = check_float("x", x)
    if x.ndim < 1:
        raise ValueError(f"x: expected at least 1 dimension (..., D), got shape {x.shape}")
    D = x.shape[-1]
    check_float("gamma", gamma, dtype=x.dtype, shape=(D,), owner="x's")
    check_float("beta", beta, dtype=x.dtype, shape=(D,), owner="x's")
    return layernorm.layernorm_forward(x, gamma, beta, _number("eps", eps, positive=True))


layernorm_backward = _backward(layernorm.layernorm_backward, "layernorm_forward", LayerNormCache, "xhat")


# -- embedding -------------------------------------------------------------------------------------
def embedding_forward(ids, W, scale: float = 1.0, padding_idx: int | None = None):
    """npformer.layers.embedding.embedding_forward, checked: W (V, D) float, ids integers in [0, V)
    of any shape, scale a finite number, padding_idx None or a row of W."""
    W = check_float("W", W, ndim=2)
    ids = check_ids("ids", ids, W.shape[0], ndim=None)
    scale = _number("scale", scale)
    if padding_idx is not None:
        if isinstance(padding_idx, (bool, np.bool_)) or not isinstance(padding_idx, (int, np.integer)):
            raise TypeError(f"padding_idx: expected an int or None, got {describe(padding_idx)}")
        if not 0 <= padding_idx < W.shape[0]:
            raise ValueError(f"padding_idx: expected an int in [0, {W.shape[0]}) (a row of W), "
                             f"got {padding_idx}")
    return embedding.embedding_forward(ids, W, scale, padding_idx)


def embedding_backward(dout, cache):
    """npformer.layers.embedding.embedding_backward, checked: dout (..., D) like the forward's output."""
    ids, (_, D), dtype, _, _ = _cache("cache", cache, EmbeddingCache, "embedding_forward")
    _grad(dout, ids.shape + (D,), dtype)
    return embedding.embedding_backward(dout, cache)


# -- activations -----------------------------------------------------------------------------------
def relu_forward(x):
    """npformer.layers.activations.relu_forward, checked: x a finite float array."""
    return activations.relu_forward(check_float("x", x))


def relu_backward(dout, cache):
    """npformer.layers.activations.relu_backward, checked: dout a float array of x's shape."""
    positive = _cache("cache", cache, activations.ReluCache, "relu_forward").positive
    dout = check_float("dout", dout, finite=False)
    if dout.shape != positive.shape:
        raise ValueError(f"dout: expected shape {positive.shape} (the forward output's), got "
                         f"{dout.shape}")
    return activations.relu_backward(dout, cache)


def gelu_forward(x):
    """npformer.layers.activations.gelu_forward (exact, erf), checked: x a finite float array."""
    return activations.gelu_forward(check_float("x", x))


gelu_backward = _backward(activations.gelu_backward, "gelu_forward", activations.GeluCache, "x")


def gelu_tanh_forward(x):
    """npformer.layers.activations.gelu_tanh_forward (GPT-2's), checked: x a finite float array."""
    return activations.gelu_tanh_forward(check_float("x", x))


gelu_tanh_backward = _backward(activations.gelu_tanh_backward, "gelu_tanh_forward",
                               activations.GeluTanhCache, "x")


def tanh_forward(x):
    """npformer.models.bert.tanh_forward (BERT's pooler), checked: x a finite float array."""
    return bert.tanh_forward(check_float("x", x))


tanh_backward = _backward(bert.tanh_backward, "tanh_forward", bert.TanhCache, "y")


# -- softmax and log-softmax (-inf entries are masked positions; NaN and +inf are refused) ---------
def _scores(x) -> np.ndarray:
    x = check_float("x", x, finite=False)
    if np.isnan(x).any() or np.isposinf(x).any():
        bad = int(np.count_nonzero(np.isnan(x) | np.isposinf(x)))
        raise ValueError(f"x: expected finite values or -inf (masked positions), got {bad} NaN/+inf "
                         f"entries")
    return x


def softmax_forward(x, axis: int = -1):
    """npformer.layers.softmax.softmax_forward, checked: x float, finite or -inf; axis one of x's."""
    x = _scores(x)
    return softmax.softmax_forward(x, _axis(axis, x.ndim))


softmax_backward = _backward(softmax.softmax_backward, "softmax_forward", SoftmaxCache, "y")


def log_softmax_forward(x, axis: int = -1):
    """npformer.layers.softmax.log_softmax_forward, checked as softmax_forward."""
    x = _scores(x)
    return softmax.log_softmax_forward(x, _axis(axis, x.ndim))


log_softmax_backward = _backward(softmax.log_softmax_backward, "log_softmax_forward",
                                 LogSoftmaxCache, "y")


# -- backward halves whose forward is checked in npformer.guards.functional -----------------------
def dropout_backward(dout, cache):
    """npformer.layers.dropout.dropout_backward, checked: dout a float array of the mask's shape (any
    shape when no mask was given)."""
    mask = _cache("cache", cache, dropout.DropoutCache, "dropout_forward").mask
    dout = check_float("dout", dout, finite=False)
    if mask is not None and dout.shape != mask.shape:
        raise ValueError(f"dout: expected shape {mask.shape} (the forward output's), got {dout.shape}")
    return dropout.dropout_backward(dout, cache)


def cross_entropy_backward(dout, cache):
    """npformer.layers.loss.cross_entropy_backward, checked: dout the loss's upstream gradient, a
    finite number or 0-d float array (1.0 for the loss itself)."""
    _cache("cache", cache, CrossEntropyCache, "cross_entropy_forward")
    if isinstance(dout, np.ndarray):
        if dout.shape != () or dout.dtype.kind != "f":
            raise ValueError(f"dout: expected a number or a 0-d float array (the loss is a "
                             f"scalar), got {describe(dout)}")
        _number("dout", dout.item())
    else:
        _number("dout", dout)
    return loss.cross_entropy_backward(dout, cache)
