"""torchformer's constructors check nothing themselves: each public class has an "init" check
registered in torchformer/guards, run by the Module base before __init__, whose message names the bad
argument; the framework-free rules are npformer's own functions (npformer/guards/rules.py)."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
from torch import nn

import npformer.guards.rules as rules
import npformer.guards.validation as np_checks
import torchformer as tf
import torchformer.guards.validation as tf_checks
from npformer.models.config import TransformerConfig
from torchformer.layers.module import CHECKS

PUBLIC = [getattr(tf, n) for n in tf.__all__
          if inspect.isclass(getattr(tf, n)) and issubclass(getattr(tf, n), nn.Module)
          and getattr(tf, n).__module__.startswith(("torchformer.layers.", "torchformer.models."))]
CFG = TransformerConfig(d_model=8, num_heads=2, d_ff=16, num_encoder_layers=1, num_decoder_layers=1)

# (class, args, kwargs, error, message start): one bad argument per case, named in the message
BAD = [
    (tf.Linear, (3, 0), {}, ValueError, r"out_features: expected a positive int, got 0"),
    (tf.Linear, (0, 3), {}, ValueError, r"in_features: expected a positive int, got 0"),
    (tf.Linear, (3, 2), {"dtype": "int8"}, ValueError, r"dtype: expected one of 'float32', 'float64'"),
    (tf.Linear, (3, 2), {"rng": 5}, TypeError, r"rng: expected a torch.Generator, a numpy"),
    (tf.LayerNorm, (0,), {}, ValueError, r"d_model: expected a positive int, got 0"),
    (tf.LayerNorm, (4,), {"eps": 0.0}, ValueError, r"LayerNorm: eps: expected a positive finite float"),
    (tf.Embedding, (0, 4), {}, ValueError, r"num_embeddings: expected a positive int"),
    (tf.Embedding, (5, 4), {"padding_idx": 5}, ValueError, r"Embedding: padding_idx: expected None"),
    (tf.Embedding, (5, 4), {"scale": "2"}, TypeError, r"Embedding: scale: expected a finite float, got str"),
    (tf.SinusoidalPositionalEncoding, (4,), {"max_len": 0}, ValueError, r"max_len: expected a positive"),
    (tf.LearnedPositionalEncoding, (-1,), {}, ValueError, r"d_model: expected a positive int, got -1"),
    (tf.Activation, ("tanh",), {}, ValueError, r"Activation: name: expected one of"),
    (tf.Dropout, (1.0,), {}, ValueError, r"p: expected a float in \[0, 1\), got 1.0"),
    (tf.Dropout, (0.1,), {"rng": np.random.default_rng(0)}, TypeError,
     r"rng: expected a torch.Generator or None, got numpy.random.Generator"),
    (tf.MultiHeadAttention, (6, 4), {}, ValueError, r"MultiHeadAttention: d_model: expected a multiple"),
    (tf.MultiHeadAttention, (8, 0), {}, ValueError, r"MultiHeadAttention: num_heads: expected a positive"),
    (tf.MultiHeadAttention, (8, 2), {"dropout": 1.5}, ValueError, r"dropout: expected a float in \[0, 1\)"),
    (tf.PositionwiseFeedForward, (4, 0), {}, ValueError, r"PositionwiseFeedForward: d_ff: expected a"),
    (tf.CrossEntropyLoss, (), {"ignore_index": 1.5}, TypeError, r"ignore_index: expected an int, got 1.5"),
    (tf.CrossEntropyLoss, (), {"label_smoothing": 2}, ValueError, r"label_smoothing: expected a float in"),
    (tf.EncoderLayer, ({"d_model": 8},), {}, TypeError, r"config: expected a TransformerConfig, got dict"),
    (tf.Encoder, (None,), {}, TypeError, r"config: expected a TransformerConfig, got NoneType"),
    (tf.DecoderLayer, (CFG,), {"cross_attention": 1}, TypeError, r"cross_attention: expected a bool, got 1"),
    (tf.Decoder, (CFG,), {"cross_attention": "yes"}, TypeError, r"cross_attention: expected a bool"),
    (tf.Transformer, (CFG,), {"seed": -1}, ValueError, r"seed: expected a non-negative int, got -1"),
    (tf.EncoderClassifier, (CFG,), {"seed": 1.5}, ValueError, r"seed: expected a non-negative int"),
    (tf.CausalLM, ("config",), {}, TypeError, r"config: expected a TransformerConfig, got str"),
    (tf.BertModel, (CFG,), {"pooler": None}, TypeError, r"pooler: expected a bool, got None"),
    (tf.BertForMaskedLM, (CFG,), {"seed": True}, ValueError, r"seed: expected a non-negative int"),
    (tf.BertForSequenceClassification, (CFG,), {"seed": "0"}, ValueError, r"seed: expected a non-neg"),
]


def test_the_public_classes_are_found():
    assert {c.__name__ for c in PUBLIC} >= {"Linear", "MultiHeadAttention", "Transformer", "BertModel"}


@pytest.mark.parametrize("cls", PUBLIC, ids=lambda c: c.__name__)
def test_every_public_class_has_its_own_init_check(cls):
    assert cls in CHECKS["init"], f"{cls.__name__} has no registered init check"


def test_every_public_class_has_a_bad_argument_case():
    assert {c for c, *_ in BAD} == set(PUBLIC)


@pytest.mark.parametrize("cls, args, kwargs, error, message", BAD,
                         ids=[f"{c.__name__}-{i}" for i, (c, *_) in enumerate(BAD)])
def test_a_bad_constructor_argument_is_refused_naming_it(cls, args, kwargs, error, message):
    with pytest.raises(error, match="^" + message):
        cls(*args, **kwargs)


def test_the_init_check_runs_before_the_constructor_body(monkeypatch):
    """A refused argument leaves nothing half-built: the body, which would draw from the rng, never
    runs (the generator's state is unchanged)."""
    gen = torch.Generator().manual_seed(3)
    state = gen.get_state()
    with pytest.raises(ValueError, match="^out_features"):
        tf.Linear(4, 0, rng=gen)
    assert torch.equal(gen.get_state(), state)
    tf.Linear(4, 2, rng=gen)
    assert not torch.equal(gen.get_state(), state)           # a good call does draw


def test_a_subclass_with_its_own_constructor_is_checked_by_its_base_on_super():
    class Wide(tf.Linear):
        def __init__(self, n):
            super().__init__(n, 2 * n)

    with pytest.raises(ValueError, match=r"^in_features: expected a positive int, got 0"):
        Wide(0)
    assert Wide(3).out_features == 6


@pytest.mark.parametrize("name", ["check_positive_int", "check_probability", "check_length",
                                  "check_count", "check_seed", "check_flag", "check_config",
                                  "check_model_mask_shape", "check_key_keep_shape"])
def test_the_twins_share_one_implementation_of_each_framework_free_rule(name):
    assert getattr(tf_checks, name) is getattr(rules, name)
    if hasattr(np_checks, name):
        assert getattr(np_checks, name) is getattr(rules, name)


def test_a_shared_rule_refuses_alike_in_both_twins():
    """One ambiguous 2-D mask (its first axis is the batch size), refused by both models alike."""
    import npformer as nf
    from tests.torchformer.helpers import small_config
    c = small_config()
    ids = np.array([[1, 2, 3], [4, 5, 6]])
    errors = []
    for model, arg in ((nf.CausalLM(c), ids), (tf.CausalLM(c), torch.as_tensor(ids))):
        with pytest.raises(ValueError, match=r"^mask: a 2-D mask is read as \(q_len, k_len\)") as e:
            model(arg, mask=np.ones((2, 3), dtype=bool))
        errors.append(str(e.value))
    assert errors[0] == errors[1]
