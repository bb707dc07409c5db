"""torchformer: causality, drawn over small random configs (tests/npformer/model_invariants.py): in CausalLM and
in the Transformer's decoder, tokens after position t change no logit, attention weight, input
gradient or parameter gradient of the loss of positions <= t; in eval mode and in training mode
with dropout at every site, by the explicit attention path (weights compared) and by SDPA."""
from hypothesis import given
from hypothesis import strategies as st

from tests.npformer.model_invariants import check_causality, configs, draw_ids, model_settings
from tests.torchformer.models.invariant_twin import TorchTwin


def draw_case(data):
    config = data.draw(configs(pad_id=data.draw(st.sampled_from([0, 1, None]))))
    B, T = data.draw(st.integers(1, 3)), data.draw(st.integers(2, 6))
    t = data.draw(st.integers(0, T - 2))
    prefix = draw_ids(data.draw, config, B, t + 1)
    tails = [draw_ids(data.draw, config, B, T - t - 1) for _ in range(2)]
    return config, B, prefix, tails, t, data.draw(st.booleans())


@model_settings()
@given(data=st.data(), need_weights=st.booleans())
def test_causal_lm_later_tokens_change_nothing_at_earlier_positions(data, need_weights):
    config, _, prefix, (tail_a, tail_b), t, train = draw_case(data)
    check_causality(TorchTwin(need_weights), "CausalLM", config, prefix, tail_a, tail_b, t, train)


@model_settings()
@given(data=st.data(), need_weights=st.booleans())
def test_decoder_later_target_tokens_change_nothing_at_earlier_positions(data, need_weights):
    config, B, prefix, (tail_a, tail_b), t, train = draw_case(data)
    src = draw_ids(data.draw, config, B, data.draw(st.integers(1, 5)))
    check_causality(TorchTwin(need_weights), "Transformer", config, prefix, tail_a, tail_b, t, train, src=src)
