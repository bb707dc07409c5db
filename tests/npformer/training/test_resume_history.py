"""A resumed run keeps its whole history: the checkpoint holds every step's loss, learning rate and
gradient norm and the evaluations (bounded), `--plot` and the printed summary cover the whole run,
and a file written before histories were kept still loads (both backends)."""
import re

import numpy as np
import pytest

from npformer.cli.main import main
from npformer.io import checkpoint as ck
from npformer.training import history as H
from npformer.training.metrics import TrainResult
from npformer.training.resume import load_training_state, save_training_state
from tests.npformer.conftest import tiny_train_args

TINY = tiny_train_args(steps=None, max_len=4, num_symbols=5, dropout=0.2, warmup=3, seed=3)
RESUME = ["--no-progress", "--examples", "0", "--eval-size", "4"]


@pytest.fixture(params=["numpy", "torch"])
def backend(request):
    if request.param == "torch":
        pytest.importorskip("torch")
    return request.param


def final_loss(out: str) -> str:
    return re.search(r"final train loss (\S+) \(mean of the run's last (\d+) steps\)", out).groups()


def test_a_resumed_run_keeps_the_whole_history(tmp_path, capsys, monkeypatch, backend):
    from npformer.training import plots
    drawn = []
    monkeypatch.setattr(plots, "plot_loss_curve",
                        lambda steps, losses, path, **kw: drawn.append((list(steps), list(losses),
                                                                        kw)) or str(path))
    extra = ["--backend", backend]
    full, half, resumed = (str(tmp_path / n) for n in ("full.npz", "half.npz", "resumed.npz"))
    assert main(["train", *TINY, *extra, "--steps", "5", "--save", full]) == 0
    full_out = capsys.readouterr().out
    assert main(["train", *TINY, *extra, "--steps", "3", "--save", half]) == 0
    capsys.readouterr()
    assert main(["train", *extra, "--resume", half, "--steps", "2", "--save", resumed,
                 "--plot", str(tmp_path / "plots"), *RESUME]) == 0
    res_out = capsys.readouterr().out
    h_full, h_half, h_res = (ck.load_checkpoint(p).metadata["history"] for p in (full, half, resumed))
    assert h_half["steps"] == [1, 2, 3] and h_full["steps"] == h_res["steps"] == [1, 2, 3, 4, 5]
    for name in ("losses", "lrs", "grad_norms"):         # the same run, bit for bit
        assert h_res[name] == h_full[name]
        assert h_res[name][:3] == h_half[name]
    # the plot draws all 5 steps at their step numbers, and both calls' final evaluations
    (steps, losses, kw), = drawn
    assert steps == [1, 2, 3, 4, 5] and losses == h_full["losses"]
    assert kw["eval_steps"] == [3, 5]
    # the summary's loss is the whole run's last steps, as the uninterrupted run prints it
    assert final_loss(res_out) == final_loss(full_out) == (final_loss(full_out)[0], "5")


def test_a_loaded_state_carries_its_history(tmp_path, capsys):
    half = str(tmp_path / "half.npz")
    assert main(["train", *TINY, "--steps", "3", "--save", half]) == 0
    capsys.readouterr()
    state = load_training_state(half)
    assert state.history.steps == [1, 2, 3] and len(state.history.losses) == 3
    assert [e[0] for e in state.history.evals] == [3]
    whole = state.whole_result(TrainResult(3, [], [], [], [], 0, 0.0))
    assert whole.loss_steps == [1, 2, 3] and whole.losses == state.history.losses
    assert whole.eval_history[0][0] == 3 and np.isfinite(whole.eval_history[0][1].loss)


def test_a_file_without_history_still_resumes(tmp_path, capsys):
    half, old = str(tmp_path / "half.npz"), str(tmp_path / "old.npz")
    assert main(["train", *TINY, "--steps", "3", "--save", half]) == 0
    state = load_training_state(half)
    c = ck.load_checkpoint(half)
    meta = {k: v for k, v in c.metadata.items() if k != "history"}
    ck.save_checkpoint(old, state.model, state.optimizer, state.schedule, step=3, metadata=meta)
    assert load_training_state(old).history.steps == []
    assert main(["train", "--resume", old, "--steps", "2", "--save", str(tmp_path / "r.npz"),
                 *RESUME]) == 0
    assert "(mean of the run's last 2 steps)" in capsys.readouterr().out
    assert ck.load_checkpoint(str(tmp_path / "r.npz")).metadata["history"]["steps"] == [4, 5]


def test_a_malformed_history_is_a_checkpoint_error(tmp_path, capsys):
    half, bad = str(tmp_path / "half.npz"), str(tmp_path / "bad.npz")
    assert main(["train", *TINY, "--steps", "3", "--save", half]) == 0
    state = load_training_state(half)
    meta = ck.load_checkpoint(half).metadata
    meta["history"]["losses"] = meta["history"]["losses"][:2]
    ck.save_checkpoint(bad, state.model, state.optimizer, state.schedule, step=3, metadata=meta)
    with pytest.raises(ck.CheckpointError, match=r"history: losses: expected 3 numbers"):
        load_training_state(bad)
    state.history = [1.0]
    with pytest.raises(TypeError, match="state.history: expected a RunHistory, got list"):
        save_training_state(bad, state)


def fake_result(first: int, n: int, evals=()) -> TrainResult:
    steps = np.arange(first, first + n)
    return TrainResult(int(steps[-1]), [float(s) for s in steps], [0.5 * s for s in steps],
                       [2.0 * s for s in steps], list(evals), n, 1.0)


def test_the_history_stays_bounded_and_keeps_step_numbers(monkeypatch):
    monkeypatch.setattr(H, "MAX_POINTS", 8)
    monkeypatch.setattr(H, "MAX_EVALS", 3)
    h = H.RunHistory()
    point = H.EvalPoint(1.0, 0.5, 0.25)
    h.add(fake_result(1, 6, [(2, point), (4, point)]), 1)
    assert h.stride == 1 and h.steps == [1, 2, 3, 4, 5, 6]
    h.add(fake_result(7, 6, [(8, point), (12, point)]), 7)     # 12 steps: over 8, one in 2 kept
    assert h.stride == 2 and h.steps == [1, 3, 5, 7, 9, 11]
    assert h.losses == [1.0, 3.0, 5.0, 7.0, 9.0, 11.0] and h.lrs == [0.5 * s for s in h.steps]
    assert [e[0] for e in h.evals] == [4, 12]                  # 4 > 3: every second, the newest kept
    h.add(fake_result(13, 7), 13)                               # 19 steps: 10 kept, then one in 4
    assert h.stride == 4 and h.steps == [1, 5, 9, 13, 17]
    back = H.RunHistory.from_dict(h.to_dict())
    assert back.to_dict() == h.to_dict()


def test_a_result_without_learning_rates_keeps_its_losses():
    h = H.RunHistory()
    h.add(TrainResult(2, [1.0, 0.5], [], [], [], 10, 0.1), 1)
    assert h.steps == [1, 2] and h.losses == [1.0, 0.5]
    assert np.isnan(h.lrs).all() and np.isnan(h.grad_norms).all()
