"""torchformer: causality, drawn over small random configs (tests/npformer/model_invariants.py): in CausalLM and
in the Transformer's decoder, tokens after position t change no logit, attention weight, input
gradient or parameter gradient of the loss of positions <= t; in eval mode and in training mode
with dropout at every site, by the explicit attention path (weights compared) and by SDPA."""
import pytest

from tests.npformer.models.test_causality import (  # noqa: F401 (collected here, on torchformer)
    test_causal_lm_later_tokens_change_nothing_at_earlier_positions,
    test_decoder_later_target_tokens_change_nothing_at_earlier_positions,
)
from tests.torchformer.models.invariant_twin import TorchTwin


@pytest.fixture(scope="module")
def make_twin():
    """torchformer's twin for the same tests: make_twin(variant), variant True the explicit
    attention path (attention weights compared), False SDPA."""
    return TorchTwin
