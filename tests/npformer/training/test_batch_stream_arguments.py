"""BatchStream (the resumable training batches) and TrainConfig.seed name bad arguments: a float
seed or batch size was cut silently (seed=3.5 drew seed 3's batches, batch_size=2.7 gave 2 rows), a
string seed was parsed, a negative seed failed inside NumPy ("expected non-negative integer") and a
missing task on the first batch (AttributeError); TrainConfig took seeds past 2**63 - 1, the range
of every other seed of both twins."""
import numpy as np
import pytest

from npformer.data.tasks import Task
from npformer.training.resume import BatchStream
from npformer.training.train import TrainConfig

TASK = Task("reverse", num_symbols=5, max_len=4)


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(seed=3.5), ValueError, "seed: expected a non-negative int, got 3.5"),
    (dict(seed="3"), ValueError, "seed: expected a non-negative int, got '3'"),
    (dict(seed=-1), ValueError, "seed: expected a non-negative int, got -1"),
    (dict(seed=True), ValueError, "seed: expected a non-negative int, got True"),
    (dict(seed=2**63), ValueError, "seed: expected an int from 0 to 2**63 - 1"),
    (dict(batch_size=2.7), ValueError, "batch_size: expected a positive int, got 2.7"),
    (dict(batch_size=0), ValueError, "batch_size: expected a positive int, got 0"),
    (dict(split=None), TypeError, "split: expected 'train' or 'heldout', got None"),
], ids=repr)
def test_bad_stream_arguments_are_named(kwargs, error, message):
    args = dict(task=TASK, batch_size=4, seed=0) | kwargs
    with pytest.raises(error) as e:
        BatchStream(**args)
    assert str(e.value).startswith(message)


@pytest.mark.parametrize("task", [None, "reverse", np.arange(3)], ids=repr)
def test_a_stream_without_a_task_is_named_at_once(task):
    with pytest.raises(TypeError, match="task: expected a task with sample"):
        BatchStream(task, 4)


def test_numpy_integers_are_taken_as_python_ones():
    a, b = BatchStream(TASK, np.int64(4), seed=np.uint32(7)), BatchStream(TASK, 4, seed=7)
    assert (type(a.batch_size), type(a.seed)) == (int, int)
    assert a.state_dict() == b.state_dict()
    assert np.array_equal(next(a).src, next(b).src)


@pytest.mark.parametrize("seed", [2**63, 2**64, np.uint64(2**63 + 5)], ids=repr)
def test_train_config_seed_has_every_seeds_range(seed):
    with pytest.raises(ValueError, match=r"TrainConfig.seed: expected an int from 0 to 2\*\*63 - 1"):
        TrainConfig(seed=seed)
    assert TrainConfig(seed=2**63 - 1).seed == 2**63 - 1
