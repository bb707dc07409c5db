"""Causality, drawn over small random configs (tests/npformer/model_invariants.py): in CausalLM and
in the Transformer's decoder, tokens after position t change no logit, attention weight, input
gradient or parameter gradient of the loss of positions <= t; in eval mode and in training mode
with dropout at every site, with the plain layers and with npformer.fast's methods bound."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.npformer.model_invariants import Twin, check_causality, configs, draw_ids, model_settings


@pytest.fixture(scope="module")
def make_twin():
    """The twin the properties run on, made as make_twin(variant): here npformer, variant True
    binding npformer.fast's methods (tests/torchformer/models/test_tf_causality.py collects
    these tests again with torchformer's)."""
    return Twin


def draw_case(data):
    config = data.draw(configs(pad_id=data.draw(st.sampled_from([0, 1, None]))))
    B, T = data.draw(st.integers(1, 3)), data.draw(st.integers(2, 6))
    t = data.draw(st.integers(0, T - 2))
    prefix = draw_ids(data.draw, config, B, t + 1)
    tails = [draw_ids(data.draw, config, B, T - t - 1) for _ in range(2)]
    return config, B, prefix, tails, t, data.draw(st.booleans())


@model_settings()
@given(data=st.data(), variant=st.booleans())
def test_causal_lm_later_tokens_change_nothing_at_earlier_positions(data, variant, make_twin):
    config, _, prefix, (tail_a, tail_b), t, train = draw_case(data)
    check_causality(make_twin(variant), "CausalLM", config, prefix, tail_a, tail_b, t, train)


@model_settings()
@given(data=st.data(), variant=st.booleans())
def test_decoder_later_target_tokens_change_nothing_at_earlier_positions(data, variant, make_twin):
    config, B, prefix, (tail_a, tail_b), t, train = draw_case(data)
    src = draw_ids(data.draw, config, B, data.draw(st.integers(1, 5)))
    check_causality(make_twin(variant), "Transformer", config, prefix, tail_a, tail_b, t, train, src=src)
