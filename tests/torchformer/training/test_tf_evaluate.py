"""torchformer's evaluate reports what npformer's does on the same weights (float64): the loss to
rounding, the token and exact-sequence accuracies, the counts and the shown examples exactly, for a
sequence task (greedy decoding) and a classification task."""
import numpy as np
import pytest

import npformer.training.train as N
import torchformer as tf
import torchformer.training.train as T
from npformer.data.tasks import make_task


@pytest.mark.parametrize("name", ["reverse", "majority"])
@pytest.mark.parametrize("greedy", [True, False])
def test_both_twins_evaluate_alike(name, greedy):
    task = make_task(name, num_symbols=5, min_len=1, max_len=6)
    cfg = N.model_config_for(task, d_model=16, num_heads=2, d_ff=24, num_encoder_layers=1,
                             num_decoder_layers=1, dropout=0.0, dtype="float64")
    np_model = N.build_model(cfg, task, seed=5)
    examples = task.heldout(23)                               # batches of 10, 10 and 3 rows
    want = N.evaluate(np_model, task, examples, batch_size=10, greedy=greedy, num_shown=4)
    got = T.evaluate(tf.to_torch(np_model), task, examples, batch_size=10, greedy=greedy, num_shown=4)
    assert got.loss == pytest.approx(want.loss, rel=1e-12)
    assert (got.token_accuracy, got.num_examples, got.num_tokens) == \
        (want.token_accuracy, want.num_examples, want.num_tokens)
    assert got.examples == want.examples and len(want.examples) == (4 if greedy or name == "majority" else 0)
    if greedy or task.is_classification:
        assert got.sequence_accuracy == want.sequence_accuracy
    else:
        assert np.isnan(got.sequence_accuracy) and np.isnan(want.sequence_accuracy)
