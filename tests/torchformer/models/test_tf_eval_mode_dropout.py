"""torchformer: eval mode makes every dropout the identity: a model with dropout at every site (embeddings,
sublayers, attention probabilities, after the FFN activation, BERT's classifier) in eval mode gives
bit for bit what the same seed gives with every rate 0, for every model family, by the explicit
attention path and by SDPA; and a training-mode call between two eval calls changes nothing."""
import pytest

from tests.npformer.models.test_eval_mode_dropout import (  # noqa: F401 (collected here, on torchformer)
    test_eval_mode_makes_every_dropout_the_identity,
)
from tests.torchformer.models.invariant_twin import TorchTwin


@pytest.fixture(scope="module")
def make_twin():
    """torchformer's twin for the same tests: make_twin(variant), variant True the explicit
    attention path (attention weights compared), False SDPA."""
    return TorchTwin
