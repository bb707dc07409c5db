"""A float input holding NaN or +-inf is refused by both twins alike, naming the argument and the count
(`x: expected finite values, got N NaN/inf entries`), before anything runs.

Before: npformer refused it and torchformer computed on, returning NaN (LayerNorm, MultiHeadAttention,
a decoder's memory, the loss's logits) or, worse, finite numbers that hid it (Linear with +inf gave
finite-looking infs and Dropout(inf) no NaN at all)."""
import numpy as np
import pytest
import torch

import npformer as nf
import torchformer as tf

CFG = nf.TransformerConfig(d_model=8, num_heads=2, d_ff=16, num_encoder_layers=1,
                           num_decoder_layers=1, vocab_size=9, max_len=8, dtype="float64")


def x_with(value, where=(0, 1, 2), shape=(2, 3, 8)):
    x = np.random.default_rng(0).standard_normal(shape)
    x[where] = value
    return x


def calls(lib):
    """(name, module, argument positions fed the bad array, the arguments) for each public entry."""
    good = x_with(0.0)
    return [("LayerNorm", lib.LayerNorm(8, dtype="float64"), "x", lambda a: (a,)),
            ("Linear", lib.Linear(8, 4, dtype="float64"), "x", lambda a: (a,)),
            ("Dropout", lib.Dropout(0.1), "x", lambda a: (a,)),
            ("PositionwiseFeedForward", lib.PositionwiseFeedForward(8, 16, dtype="float64"), "x",
             lambda a: (a,)),
            ("MultiHeadAttention query", lib.MultiHeadAttention(8, 2, dtype="float64"), "query",
             lambda a: (a, good, good)),
            ("MultiHeadAttention key", lib.MultiHeadAttention(8, 2, dtype="float64"), "key",
             lambda a: (good, a, good)),
            ("EncoderLayer", lib.EncoderLayer(CFG), "x", lambda a: (a,)),
            ("DecoderLayer memory", lib.DecoderLayer(CFG), "memory", lambda a: (good, a)),
            ("Encoder", lib.Encoder(CFG), "x", lambda a: (a,)),
            ("CrossEntropyLoss", lib.CrossEntropyLoss(), "logits",
             lambda a: (a, np.array([[1, 2, 3], [4, 5, 6]])))]


def as_torch(args):
    return tuple(torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args)


def outcome(fn):
    try:
        fn()
    except (TypeError, ValueError) as e:
        return type(e).__name__, str(e)
    return "ok", None


@pytest.mark.parametrize("value,count", [(np.nan, 1), (np.inf, 1), (-np.inf, 1), (np.nan, 2)])
@pytest.mark.parametrize("index", range(10))
def test_non_finite_float_inputs_are_refused_alike(index, value, count):
    where = (0, 1, 2) if count == 1 else ([0, 1], [1, 2], [2, 3])
    name, np_mod, arg, args_of = calls(nf)[index]
    _, tf_mod, _, _ = calls(tf)[index]
    bad = x_with(value, where)
    got_np = outcome(lambda: np_mod(*args_of(bad)))
    got_tf = outcome(lambda: tf_mod(*as_torch(args_of(bad))))
    assert got_tf == got_np, name
    assert got_tf == ("ValueError", f"{arg}: expected finite values, got {count} NaN/inf entries")


@pytest.mark.parametrize("index", range(10))
def test_finite_inputs_still_run_in_both(index):
    _, np_mod, _, args_of = calls(nf)[index]
    _, tf_mod, _, _ = calls(tf)[index]
    good = x_with(0.5)
    np_mod(*args_of(good))
    tf_mod(*as_torch(args_of(good)))


def test_scaled_dot_product_attention_refuses_non_finite_q_like_sdpa_forward():
    q = x_with(np.nan, (0, 0, 1, 2), shape=(1, 2, 3, 4))
    k = v = x_with(0.0, shape=(1, 2, 3, 4))
    with pytest.raises(ValueError, match=r"^q: expected finite values, got 1 NaN/inf entries$"):
        nf.sdpa_forward(q, k, v)
    with pytest.raises(ValueError, match=r"^q: expected finite values, got 1 NaN/inf entries$"):
        tf.scaled_dot_product_attention(*as_torch((q, k, v)))
