"""torchformer: padding and batch independence, drawn over small random configs (tests/npformer/model_invariants.py):
a right-padded row's real positions equal the row run alone (every model family; padding given by
pad_id, or by key keep-masks / BERT's attention_mask over arbitrary tokens); the loss ignoring
pad_id is the token-weighted mean of the rows' own losses, gradients included; row i's outputs,
attention weights and input gradients do not depend on the other rows, in training mode with
dropout too. The explicit attention path and SDPA."""
import pytest

from tests.npformer.models.test_padded_and_independent_rows import (  # noqa: F401 (collected here, on torchformer)
    test_a_padded_row_equals_the_row_alone,
    test_a_padded_translation_pair_equals_the_pair_alone,
    test_a_row_does_not_depend_on_the_other_rows,
    test_key_padding_arguments_hide_whatever_tokens_the_padding_holds,
    test_the_loss_ignoring_padding_is_the_token_weighted_mean_of_the_rows,
)
from tests.torchformer.models.invariant_twin import TorchTwin


@pytest.fixture(scope="module")
def make_twin():
    """torchformer's twin for the same tests: make_twin(variant), variant True the explicit
    attention path (attention weights compared), False SDPA."""
    return TorchTwin
