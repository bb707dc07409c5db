"""A non-finite gradient stops training with a message naming the step, before the weights are
updated, and nothing corrupt is saved (the earlier checkpoint stays), in both twins."""
import numpy as np
import pytest

import npformer.layers.loss as np_loss
from npformer.cli.main import main
from npformer.data.tasks import Task
from npformer.training.train import TrainConfig
from tests.npformer.conftest import tiny_train_args

TINY = tiny_train_args(steps=4)


def nan_on_call(monkeypatch, n: int):
    """Make the n-th CrossEntropyLoss.backward return a gradient holding NaN."""
    real = np_loss.CrossEntropyLoss.backward
    calls = {"k": 0}

    def backward(self, dout=1.0):
        g = real(self, dout)
        calls["k"] += 1
        if calls["k"] == n:
            g = g.copy()
            g.flat[0] = np.nan
        return g
    backward._frees_cache = True
    monkeypatch.setattr(np_loss.CrossEntropyLoss, "backward", backward)


def test_cli_stops_at_the_step_and_keeps_the_earlier_checkpoint(tmp_path, capsys, monkeypatch):
    f = tmp_path / "m.npz"
    assert main(["train", *TINY, "--save", str(f)]) == 0
    before = f.read_bytes()
    capsys.readouterr()
    nan_on_call(monkeypatch, 3)                  # patches the plain class: no fast loss methods
    code = main(["train", *TINY, "--save", str(f), "--overwrite", "--no-fast-elementwise"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    # the model's backward refuses the NaN upstream gradient; the loop names the step
    assert "step 3: the gradient norm is not finite (the loss's gradient: dlogits: expected a " \
        "finite upstream gradient, got 1 NaN/inf entries" in err[0], err
    assert "nothing was saved" in err[0]
    assert f.read_bytes() == before                                # the earlier file is intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz"]


def test_api_stops_before_updating_the_weights(monkeypatch):
    import npformer.training.train as T
    task = Task("reverse", num_symbols=4, max_len=3)
    model = T.build_model(T.model_config_for(task, d_model=8, num_heads=2, d_ff=8,
                                             num_encoder_layers=1, num_decoder_layers=1), task)
    seen = {}

    def remember(step, loss):
        seen[step] = {k: v.copy() for k, v in model.state_dict().items()}
    nan_on_call(monkeypatch, 2)
    with pytest.raises(FloatingPointError, match=r"^step 2: the gradient norm is not finite \(the "
                                                 r"loss's gradient: dlogits: expected a finite "):
        T.train(model, task, TrainConfig(steps=5, batch_size=4, warmup=2, progress=False),
                callback=remember)
    assert list(seen) == [1]
    after = model.state_dict()
    assert all(np.array_equal(after[k], seen[1][k]) for k in after)   # step 2 changed nothing
    assert all(np.isfinite(v).all() for v in after.values())


def test_torch_twin_stops_too():
    torch = pytest.importorskip("torch")
    import torchformer.training.train as T
    task = Task("reverse", num_symbols=4, max_len=3)
    model = T.build_model(T.model_config_for(task, d_model=8, num_heads=2, d_ff=8,
                                             num_encoder_layers=1, num_decoder_layers=1), task)
    p = next(model.parameters())
    calls = {"k": 0}

    def hook(g):
        calls["k"] += 1
        return g * float("nan") if calls["k"] == 2 else g
    p.register_hook(hook)
    with pytest.raises(FloatingPointError, match=r"^step 2: the gradient norm is nan"):
        T.train(model, task, TrainConfig(steps=5, batch_size=4, warmup=2, progress=False))
    assert all(torch.isfinite(v).all() for v in model.state_dict().values())


def test_runaway_learning_rate_stops_as_diverged_in_one_line(tmp_path, capsys):
    """A learning rate many orders too high keeps the loss finite (LayerNorm renormalises float32
    overflow) but astronomically large: the run stops, naming the step and the option to change,
    with no NumPy warning from inside a layer, and saves nothing."""
    f = tmp_path / "m.npz"
    code = main(["train", *tiny_train_args(steps=30), "--lr", "1e9", "--warmup", "1",
                 "--save", str(f)])
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert code == 2 and len(err) == 1, captured.err
    assert "training diverged at step" in err[0] and "lower the learning rate (lr=1000000000.0)" in err[0]
    assert "nothing was saved" in err[0]
    assert "RuntimeWarning" not in captured.err + captured.out
    assert not f.exists()


def test_a_loss_just_above_the_divergence_bound_stops_the_api_run(monkeypatch):
    import npformer.training.train as T
    from npformer.training.loop import DIVERGED_LOSS
    task = Task("reverse", num_symbols=4, max_len=3)
    model = T.build_model(T.model_config_for(task, d_model=8, num_heads=2, d_ff=8,
                                             num_encoder_layers=1, num_decoder_layers=1), task)
    real = np_loss.CrossEntropyLoss.forward
    calls = {"k": 0}

    def forward(self, logits, targets):
        out = real(self, logits, targets)
        calls["k"] += 1
        return out + 2 * DIVERGED_LOSS if calls["k"] == 2 else out
    monkeypatch.setattr(np_loss.CrossEntropyLoss, "forward", forward)
    before = {}

    def remember(step, loss):
        before.update({k: v.copy() for k, v in model.state_dict().items()})
    with pytest.raises(FloatingPointError, match=r"^training diverged at step 2: loss 2\d{3}"):
        T.train(model, task, TrainConfig(steps=5, batch_size=4, warmup=2, progress=False),
                callback=remember, fast_threads=0)
    after = model.state_dict()
    assert all(np.array_equal(after[k], before[k]) for k in after)    # step 2 changed nothing


@pytest.mark.parametrize("task", ["lm", "copy"])
def test_weights_overflowed_by_a_runaway_learning_rate_stop_as_diverged(task, tmp_path, capsys):
    """When an update leaves weights whose products overflow, the next forward's stage check meets
    non-finite activations (before any loss exists): that is divergence, reported with the step and
    the option to change, not as an argument error about an internal array."""
    f = tmp_path / "m.npz"
    code = main(["train", "--task", task, "--lr", "1e9", "--warmup", "1", "--steps", "30",
                 "--d-model", "16", "--heads", "2", "--d-ff", "32", "--layers", "1",
                 "--batch-size", "8", "--no-progress", "--threads", "1", "--save", str(f)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert "training diverged at step 2: a stage of the forward pass met non-finite values" in err[0]
    assert "lower the learning rate (lr=1000000000.0)" in err[0]
    assert "nothing was saved" in err[0] and not f.exists()
