"""`train(model, task, ...)` (both twins) checks that the model holds the task before anything is
drawn: its embedding has a row for every id of the task and its positions reach the task's longest
row. The first batch used to fail naming `src` or `ids` (`src: expected token ids in [0, 5), got
values in [0, 7]`), arguments the caller never gave."""
import pytest

import npformer as nf
from npformer.data.tasks import Task
from npformer.training.train import TrainConfig, train

TASK = Task(num_symbols=5, max_len=10)
CFG = TrainConfig(steps=1, batch_size=2, eval_size=2, progress=False)
TRAINERS = [(nf, train)]
try:
    import torchformer as tf
    from torchformer.training.train import train as tf_train
    TRAINERS.append((tf, tf_train))
except ImportError:                                     # numpy only: npformer's own
    pass


def model(twin, **changes):
    c = dict(d_model=8, num_heads=2, d_ff=16, num_encoder_layers=1, num_decoder_layers=1,
             vocab_size=TASK.vocab_size, max_len=12)
    return twin.Transformer(nf.TransformerConfig(**{**c, **changes}))


@pytest.mark.parametrize("twin,fit", TRAINERS, ids=["npformer", "torchformer"][:len(TRAINERS)])
def test_a_model_without_rows_for_the_tasks_ids_is_named(twin, fit):
    m = model(twin, vocab_size=5)
    before = {k: v.copy() if hasattr(v, "copy") else v.clone() for k, v in m.state_dict().items()}
    with pytest.raises(ValueError, match=r"^model: its embedding has 5 rows, but the reverse task's "
                                         r"ids reach 7 \(task.vocab_size=8\); build the model with "
                                         r"vocab_size >= 8$"):
        fit(m, TASK, CFG)
    assert all((before[k] == v).all() for k, v in m.state_dict().items())


@pytest.mark.parametrize("twin,fit", TRAINERS, ids=["npformer", "torchformer"][:len(TRAINERS)])
def test_a_model_too_short_for_the_tasks_rows_is_named(twin, fit):
    with pytest.raises(ValueError, match=r"^model: its max_len=5 is shorter than the reverse task's "
                                         r"rows of up to 11 tokens; build the model with max_len >= 11$"):
        fit(model(twin, max_len=5), TASK, CFG)


@pytest.mark.parametrize("twin,fit", TRAINERS, ids=["npformer", "torchformer"][:len(TRAINERS)])
def test_a_model_with_room_to_spare_trains(twin, fit):
    assert fit(model(twin, vocab_size=50, max_len=11), TASK, CFG).steps == 1
