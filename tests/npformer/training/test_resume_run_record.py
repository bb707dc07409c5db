"""A resumed run's checkpoint records the whole run, not its last call: train.steps, the run's target
tokens and one segment per call, with the data position and dropout generator of the uninterrupted
run (both backends)."""
import numpy as np
import pytest

from npformer.cli.main import main
from npformer.io import checkpoint as ck
from npformer.training.resume import load_training_state
from tests.npformer.conftest import tiny_train_args

TINY = tiny_train_args(steps=None, max_len=4, num_symbols=5, dropout=0.2, warmup=3, seed=3)


@pytest.fixture(params=["numpy", "torch"])
def backend(request):
    if request.param == "torch":
        pytest.importorskip("torch")
    return request.param


def run_files(tmp_path, backend):
    """(the 5-step run's metadata, the 3-step run's, 3 steps resumed for 2 more's), as saved."""
    extra = ["--backend", backend]
    full, half, resumed = (str(tmp_path / n) for n in ("full.npz", "half.npz", "resumed.npz"))
    assert main(["train", *TINY, *extra, "--steps", "5", "--save", full]) == 0
    assert main(["train", *TINY, *extra, "--steps", "3", "--save", half]) == 0
    assert main(["train", *extra, "--resume", half, "--steps", "2", "--save", resumed,
                 "--no-progress", "--examples", "0", "--eval-size", "4"]) == 0
    return full, half, resumed


def test_a_resumed_checkpoint_records_the_whole_run(tmp_path, capsys, backend):
    full, half, resumed = run_files(tmp_path, backend)
    capsys.readouterr()
    m_full, m_half, m_res = (ck.load_checkpoint(p).metadata for p in (full, half, resumed))
    assert m_full["train"]["steps"] == m_res["train"]["steps"] == 5
    assert m_half["train"]["steps"] == 3
    assert m_res["run"]["steps"] == 5
    assert [(s["first_step"], s["last_step"]) for s in m_res["run"]["segments"]] == [(1, 3), (4, 5)]
    assert m_res["run"]["segments"][0] == m_half["run"]["segments"][0]
    # the same batches in the same order: the whole run's tokens are the uninterrupted run's
    assert m_full["run"]["tokens"] > m_half["run"]["tokens"] > 0
    assert m_res["run"]["tokens"] == m_full["run"]["tokens"]
    assert m_res["resume"] == m_full["resume"]           # data position and dropout generator


def test_a_loaded_state_carries_the_run_on(tmp_path, capsys):
    _, _, resumed = run_files(tmp_path, "numpy")
    capsys.readouterr()
    state = load_training_state(resumed)
    assert state.step == state.config.steps == 5
    assert [s["last_step"] for s in state.segments] == [3, 5]
    assert state.run_record()["tokens"] == sum(s["tokens"] for s in state.segments)


def test_steps_not_recorded_leave_the_tokens_unknown(tmp_path, capsys):
    """A state whose step was set by hand (no segment for its steps) claims no token count."""
    _, half, _ = run_files(tmp_path, "numpy")
    capsys.readouterr()
    state = load_training_state(half)
    state.step += 2
    assert state.run_record()["tokens"] is None
    assert np.isfinite(state.segments[0]["seconds"])


def test_a_malformed_run_record_is_a_checkpoint_error(tmp_path, capsys):
    from npformer.training.resume import save_training_state
    _, half, _ = run_files(tmp_path, "numpy")
    capsys.readouterr()
    state = load_training_state(half)
    bad = tmp_path / "bad.npz"
    save_training_state(bad, state)
    c = ck.load_checkpoint(bad)
    meta = {**c.metadata, "run": {"segments": "three"}}
    ck.save_checkpoint(bad, state.model, state.optimizer, state.schedule, step=state.step,
                       metadata=meta, overwrite=True)
    with pytest.raises(ck.CheckpointError, match="run: segments: expected a list of dicts with int"):
        load_training_state(bad)


@pytest.mark.parametrize("segments", ["three", [{"first_step": 1}], [None],
                                      [{"first_step": "1", "last_step": 3, "tokens": 9, "seconds": 0}]],
                         ids=repr)
def test_a_state_with_malformed_segments_is_refused_before_writing(tmp_path, capsys, segments):
    from npformer.training.resume import save_training_state
    _, half, _ = run_files(tmp_path, "numpy")
    capsys.readouterr()
    state = load_training_state(half)
    state.segments = segments
    with pytest.raises(ValueError, match="state.segments: expected a list of dicts with int"):
        save_training_state(tmp_path / "new.npz", state)
    assert not (tmp_path / "new.npz").exists()


def test_record_refuses_a_result_of_another_start(tmp_path, capsys):
    """A TrainResult that did not start at the state's step (another run's, or one recorded
    already) would move the step back or count its tokens twice: refused, the state unchanged."""
    from npformer.training.metrics import TrainResult
    _, half, _ = run_files(tmp_path, "numpy")
    capsys.readouterr()
    state = load_training_state(half)                       # step 3
    before = (state.step, list(state.segments))
    for result in (TrainResult(2, [1.0, 1.0], [], [], [], 10, 0.1),      # steps 1..2
                   TrainResult(3, [1.0, 1.0, 1.0], [], [], [], 10, 0.1)):  # counted already
        with pytest.raises(ValueError, match="result: expected a training call that started at "
                                             "this state's step 3"):
            state.record(result)
    with pytest.raises(TypeError, match="result: expected the TrainResult train"):
        state.record({"steps": 5})
    assert (state.step, state.segments) == before
    state.record(TrainResult(5, [1.0, 1.0], [], [], [], 12, 0.2))       # steps 4..5
    assert state.step == 5 and state.segments[-1]["tokens"] == 12
