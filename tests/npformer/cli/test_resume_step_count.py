"""A resumed run saves the step it reached: the checkpoint's step plus the steps run, also for
`--steps 0` (it used to save step 0, so a later resume counted the schedule from 0 again)."""
import pytest

from npformer.io.checkpoint import load_checkpoint
from tests.npformer.conftest import run_cli as run
from tests.npformer.conftest import tiny_train_args


def backend_args(backend):
    if backend == "torch":
        pytest.importorskip("torch")
    return ["--backend", backend]


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("more", [0, 2])
def test_resumed_checkpoint_holds_the_resumed_step_plus_the_steps_run(backend, more, tmp_path,
                                                                      capsys):
    first, second = str(tmp_path / "a.npz"), str(tmp_path / "b.npz")
    code, _, err = run(["train", *tiny_train_args(steps=3), *backend_args(backend), "--save", first],
                       capsys)
    assert code == 0, err
    assert load_checkpoint(first).step == 3
    code, _, err = run(["train", "--resume", first, *backend_args(backend), "--steps", str(more), "--no-progress",
                          "--eval-size", "4", "--examples", "0", "--save", second], capsys)
    assert code == 0, err
    assert load_checkpoint(second).step == 3 + more
    # and in place, the reported case: the file keeps counting from where it was
    code, _, err = run(["train", "--resume", second, *backend_args(backend), "--steps", "0", "--no-progress",
                        "--eval-size", "4", "--examples", "0", "--save", second, "--overwrite"], capsys)
    assert code == 0, err
    assert load_checkpoint(second).step == 3 + more


@pytest.mark.parametrize("start", [0, 5])
def test_train_with_zero_steps_reports_the_start_step(start):
    from npformer.data.tasks import make_task
    from npformer.training.train import TrainConfig, build_model, model_config_for, train
    task = make_task("reverse", num_symbols=4, min_len=1, max_len=3)
    model = build_model(model_config_for(task, d_model=8, num_heads=2, d_ff=16), task)
    result = train(model, task, TrainConfig(steps=0, progress=False), start_step=start)
    assert result.steps == start and result.losses == []
