"""TransformerConfig takes NumPy scalars for its numbers (a size read from an array,
`d_model=np.int64(16)`, a rate `np.float32(0.1)`) and stores them as Python ints and floats; it
used to refuse them ("expected a positive int, got np.int64(16)"). Bools and non-integral values
are still refused, naming the field."""
import json

import numpy as np
import pytest

import npformer as nf

INTS = [np.int64, np.int32, np.int16, np.uint8, np.uint64]


@pytest.mark.parametrize("kind", INTS)
def test_numpy_integers_become_python_ints(kind):
    c = nf.TransformerConfig(d_model=kind(16), num_heads=kind(2), d_ff=kind(32), max_len=kind(9),
                             vocab_size=kind(20), num_classes=kind(3), num_encoder_layers=kind(1),
                             num_decoder_layers=kind(0), type_vocab_size=kind(2), src_vocab_size=kind(21),
                             tgt_vocab_size=kind(22), pad_id=kind(0))
    for f in ("d_model", "num_heads", "d_ff", "max_len", "vocab_size", "num_classes", "num_encoder_layers",
              "num_decoder_layers", "type_vocab_size", "src_vocab_size", "tgt_vocab_size", "pad_id"):
        assert type(getattr(c, f)) is int, f
    assert c == nf.TransformerConfig(d_model=16, num_heads=2, d_ff=32, max_len=9, vocab_size=20,
                                     num_classes=3, num_encoder_layers=1, num_decoder_layers=0,
                                     type_vocab_size=2, src_vocab_size=21, tgt_vocab_size=22, pad_id=0)
    json.dumps(c.to_dict())                                  # plain numbers: the checkpoint header
    assert "np." not in repr(c)


@pytest.mark.parametrize("kind", [np.float32, np.float64, np.int64])
def test_numpy_numbers_in_float_fields_become_python_numbers(kind):
    c = nf.TransformerConfig(d_model=8, num_heads=2, dropout=kind(0), attention_dropout=kind(0),
                             activation_dropout=kind(0), layer_norm_eps=kind(1))
    for f in ("dropout", "attention_dropout", "activation_dropout", "layer_norm_eps"):
        assert type(getattr(c, f)) in (int, float), f
    c = nf.TransformerConfig(d_model=8, num_heads=2, dropout=np.float32(0.25), layer_norm_eps=np.float64(1e-6))
    assert type(c.dropout) is float and c.dropout == 0.25 and c.layer_norm_eps == 1e-6


def test_replace_and_from_dict_take_numpy_scalars_too():
    c = nf.TransformerConfig(d_model=8, num_heads=2).replace(d_model=np.int64(16), dropout=np.float64(0.2))
    assert type(c.d_model) is int and c.d_model == 16 and type(c.dropout) is float
    d = {**c.to_dict(), "max_len": np.int32(7)}
    assert type(nf.TransformerConfig.from_dict(d).max_len) is int


@pytest.mark.parametrize("field,value,expected", [
    ("d_model", np.float64(16.0), "a positive int"), ("d_model", np.float32(16.5), "a positive int"),
    ("d_model", np.True_, "a positive int"), ("d_model", True, "a positive int"),
    ("num_heads", np.int64(0), "a positive int"), ("num_encoder_layers", np.int8(-1), "a non-negative int"),
    ("pad_id", np.bool_(False), "None or an int"), ("dropout", np.True_, "a float in [0, 1)"),
    ("dropout", np.float64(1.0), "a float in [0, 1)"), ("dropout", np.float32("nan"), "a float in [0, 1)"),
    ("norm_first", np.int64(1), "a bool")])
def test_bools_and_non_integral_values_are_still_refused(field, value, expected):
    with pytest.raises(ValueError) as info:
        nf.TransformerConfig(**{"d_model": 8, "num_heads": 2, field: value})
    assert str(info.value).startswith(f"TransformerConfig.{field}: expected {expected}")
    assert "got" in str(info.value)


def test_models_of_both_twins_build_from_numpy_sized_configs():
    c = nf.TransformerConfig(d_model=np.int64(8), num_heads=np.int64(2), d_ff=np.int64(16), max_len=np.int64(6),
                             vocab_size=np.int64(11), num_encoder_layers=np.int64(1),
                             num_decoder_layers=np.int64(1), dtype="float64")
    m = nf.Transformer(c, seed=0)
    out = m.forward(np.array([[1, 2, 3]]), np.array([[1, 2]]))
    assert out.shape == (1, 2, 11)
    torch = pytest.importorskip("torch")
    import torchformer as tf
    tm = tf.Transformer(c)
    assert tm(torch.tensor([[1, 2, 3]]), torch.tensor([[1, 2]])).shape == (1, 2, 11)
