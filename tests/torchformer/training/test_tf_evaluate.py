"""torchformer's evaluate reports what npformer's does on the same weights (float64): the loss to
rounding, the token and exact-sequence accuracies, the counts and the shown examples exactly, for a
sequence task (greedy decoding), a classification task, a causal LM and a masked LM."""
import numpy as np
import pytest
import torch

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


@pytest.mark.parametrize("name", ["arith", "mirror"])
def test_both_twins_evaluate_language_models_alike(name):
    from npformer.data.lm_data import ArithmeticTask
    from npformer.data.mlm_data import MirrorTask
    task = ArithmeticTask(max_number=30) if name == "arith" else MirrorTask(num_symbols=5, max_len=4)
    cfg = N.model_config_for(task, d_model=16, num_heads=2, d_ff=24, num_encoder_layers=1,
                             num_decoder_layers=1, dropout=0.0, dtype="float64")
    np_model = N.build_model(cfg, task, seed=3)
    tf_model = T.build_model(cfg, task, seed=3)
    tf_model.load_state_dict({k: torch.as_tensor(v) for k, v in np_model.state_dict().items()})
    examples = task.heldout(23)
    want = N.evaluate(np_model, task, examples, batch_size=10, num_shown=3)
    got = T.evaluate(tf_model, task, examples, batch_size=10, num_shown=3)
    assert got.loss == pytest.approx(want.loss, rel=1e-12)
    assert (got.token_accuracy, got.sequence_accuracy, got.num_examples, got.num_tokens) == \
        (want.token_accuracy, want.sequence_accuracy, want.num_examples, want.num_tokens)
    assert got.examples == want.examples and len(want.examples) == 3
