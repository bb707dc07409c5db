"""`train(..., batches=, eval_examples=)` of both twins names what is wrong before a step: a string
as `batches` failed inside the forward pass (`'str' object has no attribute 'src'`), a number in
`iter()`, and a list holding something else than batches at the step that reached it; an empty
`eval_examples` divided by zero at the first evaluation."""
import numpy as np
import pytest

import npformer.training.train as np_train
from npformer.data.tasks import Task, batch_iterator
from tests.npformer.conftest import twins

TWINS = twins(np_train, "torchformer.training.train")

TASK = Task("reverse", num_symbols=5, max_len=4)
SIZES = dict(d_model=8, num_heads=2, d_ff=16, num_encoder_layers=1, num_decoder_layers=1)


def _values(p) -> np.ndarray:
    return p.detach().cpu().numpy().copy() if hasattr(p, "detach") else p.data.copy()


def _run(T, **kwargs):
    model = T.build_model(np_train.model_config_for(TASK, **SIZES), TASK, seed=0)
    before = [_values(p) for p in model.parameters()]
    config = np_train.TrainConfig(steps=2, batch_size=4, progress=False, eval_every=1)
    try:
        T.train(model, TASK, config, **kwargs)
        outcome = ("ok", "")
    except (TypeError, ValueError) as e:
        outcome = (type(e).__name__, str(e))
    after = [_values(p) for p in model.parameters()]
    return outcome, all(np.array_equal(a, b) for a, b in zip(before, after))


GOOD = next(batch_iterator(TASK, 4, seed=0))


@pytest.mark.parametrize("name, T", TWINS, ids=lambda x: x if isinstance(x, str) else "")
@pytest.mark.parametrize("kwargs, kind, message, unchanged", [
    (dict(batches="abc"), "TypeError", "batches: expected None or an iterable of training batches",
     True),
    (dict(batches=5), "TypeError", "batches: expected None or an iterable of training batches", True),
    (dict(batches=[GOOD, "x"]), "TypeError", "batches: expected training batches (collate(task.sample("
     "rng, n)) makes one), got str for step 2", False),
    (dict(eval_examples=TASK.heldout(4).take(np.arange(0))), "ValueError",
     "eval_examples: expected at least one example, got an empty set", True),
    (dict(eval_examples="x"), "TypeError", "eval_examples: expected None (the task's held-out set)",
     True),
], ids=lambda v: repr(v)[:40])
def test_bad_batches_and_eval_examples_are_named(name, T, kwargs, kind, message, unchanged):
    (got_kind, got), same = _run(T, **kwargs)
    assert got_kind == kind and got.startswith(message), got
    assert same == unchanged                  # refused before any step unless a later batch is bad
