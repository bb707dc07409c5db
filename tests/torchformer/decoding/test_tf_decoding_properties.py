"""torchformer: decoding properties over small random models (tests/npformer/decoding_invariants.py):
rows of a batch decode as they do alone (greedy and beam), the cache changes no token, the greedy
limits of beam search and sampling, max_new_tokens respected exactly, a seed's sample repeated."""
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import torchformer
from tests.npformer.decoding_invariants import (
    DecodeTwin,
    check_budget,
    check_greedy_limits,
    check_prompt_lengths,
    check_rows_alone,
    check_seed,
    check_seed_across_processes,
    decoding_config,
    draw_inputs,
)
from tests.npformer.model_invariants import model_settings
from torchformer.decoding.sampling import sample


class TorchDecodeTwin(DecodeTwin):
    name = "torch"

    def __init__(self):
        self.api, self.sample, self.fast = torchformer, sample, False

    def to_np(self, x):
        return x.detach().cpu().numpy() if hasattr(x, "detach") else super().to_np(x)

    def generator(self, seed: int):
        return torch.Generator().manual_seed(seed)


TWIN = TorchDecodeTwin()
KINDS = ["Transformer", "CausalLM"]


@pytest.mark.parametrize("cls", KINDS)
@model_settings()
@given(data=st.data(), use_cache=st.booleans())
def test_every_row_decodes_as_it_does_alone(data, cls, use_cache):
    config = decoding_config(data)
    inputs, lengths = draw_inputs(data, cls, config)
    model = TWIN.build(cls, config)
    check_rows_alone(TWIN, model, "greedy_decode", inputs, lengths, max_new_tokens=4,
                     use_cache=use_cache)
    check_rows_alone(TWIN, model, "beam_search", inputs, lengths, max_new_tokens=4,
                     use_cache=use_cache, beam_size=data.draw(st.integers(1, 3)),
                     length_penalty_alpha=data.draw(st.sampled_from([0.0, 0.6, 1.5])))
    if cls == "CausalLM":
        check_prompt_lengths(TWIN, model, inputs, lengths, use_cache=use_cache)


@pytest.mark.parametrize("cls", KINDS)
@model_settings()
@given(data=st.data())
def test_cache_beam_width_one_and_sampling_limits_are_greedy(data, cls):
    config = decoding_config(data)
    inputs, _ = draw_inputs(data, cls, config)
    check_greedy_limits(TWIN, TWIN.build(cls, config), inputs, cls)


@pytest.mark.parametrize("cls", KINDS)
@model_settings()
@given(data=st.data(), n=st.integers(1, 4))
def test_max_new_tokens_is_respected_exactly_and_a_seed_repeats(data, cls, n):
    config = decoding_config(data)
    inputs, _ = draw_inputs(data, cls, config)
    model = TWIN.build(cls, config)
    check_budget(TWIN, model, inputs, cls, n)
    if cls == "CausalLM":
        check_seed(TWIN, model, inputs)


def test_a_seed_samples_the_same_tokens_in_other_processes():
    check_seed_across_processes(TWIN, "torchformer")
