"""The same bad argument to a public constructor or method of either twin is refused with the same
error type, and both messages name the argument and the value that came (or its type). Run over one
table for both twins; where the twins' words differed (Activation's `name`, `train("False")`, which
torch answered "training mode is expected to be boolean", LayerNorm's and Embedding's prefixes, a
non-float dtype: TypeError in torchformer, ValueError in npformer) the words are now equal; the
dtype messages still differ in what they list (torchformer also takes torch's float dtypes)."""
import pytest

import npformer as nf

tf = pytest.importorskip("torchformer")


def small_config(m, **kw):
    return m.TransformerConfig(**{"d_model": 8, "num_heads": 2, "d_ff": 16, "vocab_size": 10,
                                  "num_encoder_layers": 1, "num_decoder_layers": 1, **kw})


# label: (call on a twin, argument named, value shown) -- the value as repr, or its type's name
CASES = {
    "Activation name": (lambda m: m.Activation("GELU"), "name", "'GELU'"),
    "Activation not a str": (lambda m: m.Activation(["relu"]), "name", "['relu']"),
    "train text": (lambda m: m.Linear(2, 2).train("False"), "mode", "'False'"),
    "train None": (lambda m: m.Linear(2, 2).train(None), "mode", "None"),
    "train int": (lambda m: m.LayerNorm(4).train(0), "mode", "0"),
    "model train": (lambda m: m.Transformer(small_config(m)).train("no"), "mode", "'no'"),
    "Linear in_features": (lambda m: m.Linear(2.5, 2), "in_features", "2.5"),
    "Linear bias": (lambda m: m.Linear(2, 2, bias="no"), "bias", "'no'"),
    "Linear dtype int": (lambda m: m.Linear(2, 2, dtype="int64"), "dtype", "'int64'"),
    "Linear dtype number": (lambda m: m.Linear(2, 2, dtype=3), "dtype", "3"),
    "LayerNorm eps": (lambda m: m.LayerNorm(4, eps=-1), "eps", "-1"),
    "LayerNorm eps text": (lambda m: m.LayerNorm(4, eps="1e-5"), "eps", "str"),
    "Embedding padding_idx": (lambda m: m.Embedding(5, 4, padding_idx=7), "padding_idx", "7"),
    "Embedding scale": (lambda m: m.Embedding(5, 4, scale=float("nan")), "scale", "nan"),
    "Dropout p": (lambda m: m.Dropout(1.0), "p", "1.0"),
    "MultiHeadAttention heads": (lambda m: m.MultiHeadAttention(8, 0), "num_heads", "0"),
    "MultiHeadAttention dropout": (lambda m: m.MultiHeadAttention(8, 2, dropout=2.0), "dropout",
                                   "2.0"),
    "FeedForward activation": (lambda m: m.PositionwiseFeedForward(8, 16, activation="Relu"),
                               "activation", "'Relu'"),
    "FeedForward d_ff": (lambda m: m.PositionwiseFeedForward(8, 0), "d_ff", "0"),
    "positions max_len": (lambda m: m.LearnedPositionalEncoding(8, max_len=-3), "max_len", "-3"),
    "loss label_smoothing": (lambda m: m.CrossEntropyLoss(label_smoothing=1.5), "label_smoothing",
                             "1.5"),
    "config activation": (lambda m: m.TransformerConfig(activation="GELU"), "activation", "'GELU'"),
    "config heads": (lambda m: m.TransformerConfig(d_model=8, num_heads=3), "d_model", "num_heads=3"),
    "DecoderLayer cross_attention": (lambda m: m.DecoderLayer(small_config(m),
                                                              cross_attention="yes"),
                                     "cross_attention", "'yes'"),
    "Transformer seed": (lambda m: m.Transformer(small_config(m), seed=-1), "seed", "-1"),
}


def refusal(call, twin):
    with pytest.raises((TypeError, ValueError)) as e:
        call(twin)
    return type(e.value), str(e.value)


@pytest.mark.parametrize("label", list(CASES))
def test_both_twins_refuse_alike_and_name_argument_and_value(label):
    call, argument, value = CASES[label]
    (t_np, m_np), (t_tf, m_tf) = refusal(call, nf), refusal(call, tf)
    assert t_np is t_tf, (m_np, m_tf)
    for message in (m_np, m_tf):
        assert f"{argument}:" in message and value in message, message


@pytest.mark.parametrize("label", ["Activation name", "train text", "model train", "LayerNorm eps",
                                   "Embedding padding_idx", "FeedForward activation"])
def test_the_twins_words_are_the_same(label):
    call = CASES[label][0]
    assert refusal(call, nf) == refusal(call, tf)


def test_eval_and_a_numpy_bool_still_switch_torchformer_modes():
    import numpy as np
    m = tf.Transformer(small_config(tf)).eval()
    assert not any(x.training for x in m.modules())
    assert all(x.training for x in m.train(np.True_).modules())
