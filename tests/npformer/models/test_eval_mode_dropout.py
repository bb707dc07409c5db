"""Eval mode makes every dropout the identity: a model with dropout at every site (embeddings,
sublayers, attention probabilities, after the FFN activation, BERT's classifier) in eval mode gives
bit for bit what the same seed gives with every rate 0, for every model family, with the plain layers
and with npformer.fast's methods; and a training-mode call between two eval calls changes nothing."""
import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.npformer.model_invariants import Twin, assert_same, configs, draw_ids, model_settings


@pytest.fixture(scope="module")
def make_twin():
    """The twin the properties run on, made as make_twin(variant): here npformer, variant True
    binding npformer.fast's methods (tests/torchformer/models/test_tf_eval_mode_dropout.py collects
    these tests again with torchformer's)."""
    return Twin

FAMILIES = ["Transformer", "EncoderClassifier", "CausalLM", "BertModel", "BertForMaskedLM",
            "BertForSequenceClassification"]


def check_eval_mode_is_dropout_free(twin, cls, data):
    config = data.draw(configs(dropout=False))
    dropped = dataclasses.replace(config, dropout=0.3, attention_dropout=0.4, activation_dropout=0.5)
    B = data.draw(st.integers(1, 2))
    args = [draw_ids(data.draw, config, B, data.draw(st.integers(1, 4)))]
    if cls == "Transformer":
        args.append(draw_ids(data.draw, config, B, data.draw(st.integers(1, 4))))
    plain = twin.run(cls, config, *args)
    model = twin.build(cls, dropped, seed=0, train=False)

    def outputs():
        out = model(*args)
        return [twin.to_np(o) for o in (out if isinstance(out, tuple) else (out,)) if o is not None]
    first = outputs()
    model.train()
    model(*args)                                       # a training-mode call draws masks
    model.eval()
    again = outputs()
    ref = [o for o in plain.outputs if o is not None]
    for k, (a, b, r) in enumerate(zip(first, again, ref)):
        assert_same(f"{cls} output {k}: eval mode with dropout vs rates 0", a, r)
        assert_same(f"{cls} output {k}: eval after a training call", b, r)


@pytest.mark.parametrize("cls", FAMILIES)
@model_settings()
@given(data=st.data(), variant=st.booleans())
def test_eval_mode_makes_every_dropout_the_identity(data, cls, variant, make_twin):
    check_eval_mode_is_dropout_free(make_twin(variant), cls, data)
