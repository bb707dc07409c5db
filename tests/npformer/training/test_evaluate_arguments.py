"""`evaluate(model, task, examples, ...)` of both twins checks its arguments as `train` does, with
the same messages: an empty example set divided by zero, a list of tuples failed on a missing
`take`, a model of the wrong kind failed on a mask deep inside, `greedy="no"` decoded anyway,
`max_new_tokens=0` silently meant the default and `num_shown=-1` showed nothing."""
import numpy as np
import pytest

import npformer.training.train as np_train
from npformer.data.tasks import Task
from tests.npformer.conftest import twins

TWINS = twins(np_train, "torchformer.training.train")

TASK = Task("reverse", num_symbols=5, max_len=4)
SIZES = dict(d_model=8, num_heads=2, d_ff=16, num_encoder_layers=1, num_decoder_layers=1)


def _model(T):
    return T.build_model(np_train.model_config_for(TASK, **SIZES), TASK, seed=0)


def _outcome(fn):
    try:
        fn()
        return "ok", ""
    except (TypeError, ValueError) as e:
        return type(e).__name__, str(e)


BAD = [
    ("empty examples", lambda T, m: T.evaluate(m, TASK, TASK.heldout(4).take(np.arange(0))),
     "ValueError", "examples: expected at least one example, got an empty set"),
    ("list of tuples", lambda T, m: T.evaluate(m, TASK, [(1, 2)]),
     "TypeError", "examples: expected None (the task's held-out set) or examples from task.heldout(n)"),
    ("greedy 'no'", lambda T, m: T.evaluate(m, TASK, greedy="no"),
     "TypeError", "greedy: expected a bool, got 'no'"),
    ("max_new_tokens 0", lambda T, m: T.evaluate(m, TASK, max_new_tokens=0),
     "ValueError", "max_new_tokens: expected a positive int, got 0"),
    ("num_shown -1", lambda T, m: T.evaluate(m, TASK, num_shown=-1),
     "ValueError", "num_shown: expected a non-negative int, got -1"),
    ("batch_size 2.0", lambda T, m: T.evaluate(m, TASK, batch_size=2.0),
     "ValueError", "batch_size: expected a positive int, got 2.0"),
]


@pytest.mark.parametrize("case", BAD, ids=lambda c: c[0])
@pytest.mark.parametrize("name, T", TWINS, ids=lambda x: x if isinstance(x, str) else "")
def test_bad_evaluate_arguments_are_named_alike(name, T, case):
    _, call, kind, message = case
    got = _outcome(lambda: call(T, _model(T)))
    assert got[0] == kind and got[1].startswith(message), got


@pytest.mark.parametrize("name, T", TWINS, ids=lambda x: x if isinstance(x, str) else "")
def test_a_model_of_the_wrong_kind_is_named_before_any_batch(name, T):
    labels = Task("majority", num_symbols=5, max_len=4)             # a classification task
    other = T.build_model(np_train.model_config_for(labels, **SIZES), labels, seed=0)
    kind, message = _outcome(lambda: T.evaluate(other, TASK, TASK.heldout(4)))
    assert kind == "ValueError" and message.startswith(
        "model: the reverse task (seq2seq) trains a Transformer, got a EncoderClassifier"), message


@pytest.mark.parametrize("name, T", TWINS, ids=lambda x: x if isinstance(x, str) else "")
def test_good_arguments_still_evaluate(name, T):
    ev = T.evaluate(_model(T), TASK, TASK.heldout(4), batch_size=np.int64(2), num_shown=np.int64(1),
                    max_new_tokens=np.int64(5))
    assert ev.num_examples == 4 and len(ev.examples) == 1
