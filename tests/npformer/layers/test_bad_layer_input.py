"""Bad input to the layers and functional ops: wrong shapes and dtypes, bad constructor arguments,
non-finite numbers (docs/NUMERICS.md), replayed masks; the exception names the argument and shows
what was expected and what came."""
from __future__ import annotations

import numpy as np
import pytest

import npformer as nf
from tests.npformer.bad_input_helpers import TGT, cfg, expect, transformer


def test_wrong_rank_and_shape_of_float_inputs():
    lin = nf.Linear(4, 3, dtype="float64")
    expect(ValueError, lambda: lin(np.zeros((2, 5))), "x", "4", "(2, 5)")
    expect(ValueError, lambda: lin(np.zeros(())), "x")
    ln = nf.LayerNorm(4, dtype="float64")
    expect(ValueError, lambda: ln(np.zeros((2, 5))), "x", "4", "(2, 5)")
    mha = nf.MultiHeadAttention(8, 2, dtype="float64")
    q, kv = np.zeros((2, 3, 8)), np.zeros((2, 4, 8))
    expect(ValueError, lambda: mha(q[0], kv, kv), "query", "3 dimensions", "(3, 8)")
    expect(ValueError, lambda: mha(q, kv[:1], kv[:1]), "key", "(2, Tk, 8)", "(1, 4, 8)")
    expect(ValueError, lambda: mha(q, kv, kv[:, :3]), "value", "(2, 4, 8)", "(2, 3, 8)")
    expect(ValueError, lambda: mha(np.zeros((2, 3, 6)), kv, kv), "query", "8", "(2, 3, 6)")
    ffn = nf.PositionwiseFeedForward(8, 12, dtype="float64")
    expect(ValueError, lambda: ffn(np.zeros((2, 3, 7))), "x", "8", "(2, 3, 7)")
    pe = nf.SinusoidalPositionalEncoding(8, max_len=5, dtype="float64")
    expect(ValueError, lambda: pe(np.zeros((3, 8))), "x", "(3, 8)")
    enc = nf.EncoderLayer(cfg())
    expect(ValueError, lambda: enc(np.zeros((2, 3, 6))), "x", "8", "(2, 3, 6)")
    dec = nf.DecoderLayer(cfg())
    expect(ValueError, lambda: dec(np.zeros((2, 3, 8)), np.zeros((1, 4, 8))), "memory", "(1, 4, 8)")
    expect(ValueError, lambda: dec(np.zeros((2, 3, 8)), None), "memory", "None")
    dec_lm = nf.Decoder(cfg(), cross_attention=False)
    expect(ValueError, lambda: dec_lm(np.zeros((2, 3, 8)), np.zeros((2, 4, 8))), "memory")
    expect(ValueError, lambda: nf.sdpa_forward(np.zeros((2, 3, 4)), np.zeros((2, 3, 4)),
                                               np.zeros((2, 3, 4))), "q", "4 dimensions", "(2, 3, 4)")
    expect(ValueError, lambda: nf.sdpa_forward(np.zeros((1, 1, 2, 4)), np.zeros((1, 1, 2, 3)),
                                               np.zeros((1, 1, 2, 4))), "k", "(1, 1, 2, 3)")
    ce = nf.CrossEntropyLoss()
    expect(ValueError, lambda: ce(np.zeros((3, 4)), np.array([1, 2])), "targets", "(3,)", "(2,)")


def test_bad_component_arguments():
    expect(ValueError, lambda: nf.MultiHeadAttention(10, 4), "d_model", "num_heads=4", "10")
    expect(ValueError, lambda: nf.Activation("swish"), "name", "relu", "'swish'")
    expect(ValueError, lambda: nf.PositionwiseFeedForward(8, 12, activation="tanh"), "activation",
           "'tanh'")
    expect(ValueError, lambda: nf.Linear(2, 3, dtype="float16"), "dtype", "'float16'")
    expect(ValueError, lambda: nf.LayerNorm(4, dtype="int32"), "dtype", "'int32'")
    expect(ValueError, lambda: nf.Dropout(1.0), "p", "[0, 1)", "1.0")
    expect(TypeError, lambda: nf.Transformer({"d_model": 8}), "config", "TransformerConfig", "dict")
    expect(ValueError, lambda: nf.CausalLM(cfg(), seed=-1), "seed", "-1")
    expect(ValueError, lambda: nf.TransformerConfig.from_dict({"d_modle": 8}), "d_modle",
           "expected a subset", vs=False)


def test_constructor_arguments_are_named_as_the_caller_wrote_them():
    expect(ValueError, lambda: nf.PositionwiseFeedForward(0, 12), "d_model", "positive int", "0")
    expect(ValueError, lambda: nf.MultiHeadAttention(8, 2, dropout=1.5), "dropout", "[0, 1)", "1.5")
    expect(ValueError, lambda: nf.PositionwiseFeedForward(8, 12, dropout=-0.1), "dropout", "-0.1")
    expect(TypeError, lambda: nf.Linear(3, 2, rng=5), "rng", "Generator", "int")
    expect(TypeError, lambda: nf.Linear(3, 2).load_state_dict([1, 2]), "state", "mapping", "list")


def test_mixed_dtypes_are_refused_not_converted():
    lin64 = nf.Linear(4, 3, dtype="float64")
    expect(TypeError, lambda: lin64(np.zeros((2, 4), np.float32)), "x", "float64", "float32")
    lin32 = nf.Linear(4, 3)
    expect(TypeError, lambda: lin32(np.zeros((2, 4))), "x", "float32", "float64")
    expect(TypeError, lambda: lin32(np.zeros((2, 4), int)), "x", "float", "int64")
    expect(TypeError, lambda: lin32(np.zeros((2, 4), np.float16)), "x", "float16")
    mha = nf.MultiHeadAttention(8, 2, dtype="float64")
    x = np.zeros((1, 2, 8))
    expect(TypeError, lambda: mha(x, x.astype(np.float32), x), "key", "float64", "float32")
    expect(TypeError, lambda: nf.sdpa_forward(np.zeros((1, 1, 2, 4)),
                                              np.zeros((1, 1, 2, 4), np.float32),
                                              np.zeros((1, 1, 2, 4))), "k", "float64", "float32")
    t = transformer()
    expect(TypeError, lambda: t.decode(TGT, np.zeros((2, 3, 8), np.float32)), "memory", "float64",
           "float32")
    dec = nf.DecoderLayer(cfg())
    expect(TypeError, lambda: dec(np.zeros((2, 3, 8)), np.zeros((2, 4, 8), np.float32)), "memory",
           "float32")
    enc32 = nf.EncoderLayer(cfg(dtype="float32"))
    expect(TypeError, lambda: enc32(np.zeros((2, 3, 8))), "x", "float32", "float64")
    out = lin64(np.zeros((2, 4)))
    expect(TypeError, lambda: lin64.backward(out.astype(np.float32)), "dout", "float64", "float32")
    expect(TypeError, lambda: nf.gradcheck(lin32, np.zeros((2, 4), np.float32)), "float64")


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_float_inputs_are_refused_by_every_module(bad):
    x = np.ones((2, 3, 8))
    x[1, 2, 5] = bad
    mem = np.ones((2, 4, 8))
    mods = [(nf.Linear(8, 4, dtype="float64"), (x,)), (nf.LayerNorm(8, dtype="float64"), (x,)),
            (nf.Activation("relu"), (x,)), (nf.Dropout(0.1), (x,)),
            (nf.SinusoidalPositionalEncoding(8, 6, dtype="float64"), (x,)),
            (nf.MultiHeadAttention(8, 2, dtype="float64"), (x, mem, mem)),
            (nf.MultiHeadAttention(8, 2, dtype="float64"), (mem[:, :3], x, x)),
            (nf.PositionwiseFeedForward(8, 12, dtype="float64"), (x,)),
            (nf.EncoderLayer(cfg()), (x,)), (nf.Decoder(cfg()), (x, mem)),
            (nf.Decoder(cfg()), (mem[:, :3], x)), (nf.CrossEntropyLoss(), (x, np.zeros((2, 3), int)))]
    for m, args in mods:
        expect(ValueError, lambda: m(*args), "finite", "1 NaN/inf")
    expect(ValueError, lambda: nf.sdpa_forward(x[:, None], x[:, None], x[:, None]), "q", "finite")


def test_refused_replayed_mask_is_not_kept_for_the_next_forward():
    drop = nf.Dropout(0.5, rng=np.random.default_rng(0))
    x = np.ones((2, 3))
    drop.replay(np.ones((5, 5), bool))                            # wrong shape for x
    expect(ValueError, lambda: drop(x), "mask", "(2, 3)")
    y = drop(x)                                                   # draws a fresh mask again
    assert y.shape == (2, 3) and drop.last_mask.shape == (2, 3)


def test_safe_softmax_and_fully_masked_rows_never_nan():
    mha = nf.MultiHeadAttention(8, 2, dtype="float64")
    x = np.random.default_rng(0).standard_normal((2, 3, 8))
    out = mha(x, x, x, np.zeros((1, 1, 1, 3), bool))             # every row fully masked
    assert np.isfinite(out).all() and not mha.attn_weights.any()
    assert np.allclose(out, mha.out_proj.bias.data)               # zero heads -> the bias
    dq, dk, dv = mha.backward(np.ones_like(out))
    assert not dq.any() and not dk.any() and not dv.any()
    y, _ = nf.softmax_forward(np.array([[-np.inf, -np.inf], [1e308, -1e308]]))
    assert np.array_equal(y, [[0.0, 0.0], [1.0, 0.0]])
    with pytest.raises(ValueError, match=r"x: expected finite values or -inf .* 1 NaN/\+inf"):
        nf.softmax_forward(np.array([np.inf, 0.0]))              # +inf would give NaN: refused


@pytest.mark.parametrize("kw, error, message", [
    ({"label_smoothing": float("nan")}, ValueError, r"label_smoothing: expected a float in \[0, 1\], got nan"),
    ({"label_smoothing": 1.5}, ValueError, r"label_smoothing: expected a float in \[0, 1\], got 1.5"),
    ({"ignore_index": 0.5}, TypeError, "ignore_index: expected an int, got 0.5"),
])
def test_functional_cross_entropy_checks_its_options_as_the_module_does(kw, error, message):
    logits, targets = np.zeros((2, 3), np.float32), np.array([0, 1])
    with pytest.raises(error, match=message):
        nf.cross_entropy_forward(logits, targets, **kw)
    with pytest.raises(error, match=message):
        nf.CrossEntropyLoss(**kw)


def test_functional_cross_entropy_names_logits_that_are_not_an_array():
    with pytest.raises(TypeError, match="logits: expected a numpy array, got list"):
        nf.cross_entropy_forward([[0.0, 1.0]], np.array([0]))
