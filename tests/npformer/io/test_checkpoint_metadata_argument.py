"""`metadata` of save_checkpoint and save_training_state (both twins) must be a dict: a string or a
list of pairs was `dict()`'s own "dictionary update sequence element #0 has length 1" (or, for a
list of pairs, silently taken as a dict). Nothing is written."""
import numpy as np
import pytest

import npformer as nf
from npformer.io.checkpoint_file import CheckpointError

SAVES = [(nf.save_checkpoint, lambda: nf.Linear(3, 2))]
try:
    import torchformer as tf
    SAVES.append((tf.save_checkpoint, lambda: tf.Linear(3, 2)))
except ImportError:                                     # numpy only: npformer's own
    pass


@pytest.mark.parametrize("save,make", SAVES)
@pytest.mark.parametrize("metadata", ["notes", [("a", 1)], 5])
def test_metadata_that_is_not_a_dict_is_named_and_nothing_is_written(tmp_path, save, make, metadata):
    path = tmp_path / "m.npz"
    with pytest.raises(CheckpointError, match=f"checkpoint {path}: metadata: expected a dict of JSON "
                                              f"values, got {type(metadata).__name__}"):
        save(path, make(), metadata=metadata)
    assert list(tmp_path.iterdir()) == []


def test_save_training_state_names_it_too(tmp_path):
    from npformer.data.tasks import Task
    from npformer.training.resume import BatchStream, TrainState
    from npformer.training.train import TrainConfig
    task = Task(num_symbols=4, max_len=3)
    model = nf.Transformer(nf.TransformerConfig(d_model=8, num_heads=2, d_ff=16, num_encoder_layers=1,
                                                num_decoder_layers=1, vocab_size=task.vocab_size,
                                                max_len=8))
    opt = nf.Adam(model.named_parameters(), lr=1e-3)
    state = TrainState(model, opt, nf.WarmupSchedule(opt, 8, 4), BatchStream(task, 2),
                       TrainConfig(steps=1, batch_size=2), task)
    with pytest.raises(CheckpointError, match="metadata: expected a dict of JSON values, got str"):
        nf.save_training_state(tmp_path / "run.npz", state, metadata="notes")
    assert list(tmp_path.iterdir()) == []
    nf.save_training_state(tmp_path / "run.npz", state, metadata={"note": np.float32(1.5)})
    assert nf.load_training_state(tmp_path / "run.npz").step == 0
