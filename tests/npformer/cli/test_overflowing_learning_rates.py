"""A learning rate so large that the weights overflow: refused at the command line where no float32
update can hold it, and otherwise one line naming the step and the learning rate when the update
that made the weights overflow was the last one before an evaluation (the evaluation's forward
pass met them first), with no NumPy warnings before it and no checkpoint written."""
import os
import subprocess
import sys

import pytest

from tests.npformer.conftest import run_cli as run
from tests.npformer.conftest import tiny_train_args
from tests.paths import ROOT


@pytest.mark.parametrize("lr", ["1e300", "inf", "nan", "0", "-1"])
def test_a_learning_rate_no_float32_update_can_hold_is_refused(lr, capsys):
    code, out, err = run(["train", *tiny_train_args(), "--lr", lr], capsys)
    assert code == 2
    assert err.strip().splitlines()[-1].endswith(
        f"argument --lr: expected a number in (0.0, 3.4e+38] (float32's largest value: above it "
        f"the first update overflows), got {lr}"), err


@pytest.mark.parametrize("steps, eval_every", [(1, None), (4, 1)])
def test_weights_that_overflow_at_the_last_step_before_an_evaluation_are_one_line(
        tmp_path, steps, eval_every):
    ckpt = tmp_path / "run.npz"
    argv = [sys.executable, "-m", "npformer", "train", *tiny_train_args(steps=steps), "--lr", "1e30",
            "--save", str(ckpt)] + (["--eval-every", str(eval_every)] if eval_every else [])
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr                  # no RuntimeWarning lines before it
    assert "training diverged at step 1" in lines[0] and "lr=1e+30" in lines[0], lines[0]
    assert f"{ckpt} not written" in lines[0]
    assert not ckpt.exists()


def test_the_api_still_names_a_peak_rate_whose_schedule_factor_overflows():
    from npformer.training.train import peak_factor
    with pytest.raises(ValueError, match=r"^lr: expected a peak learning rate below 1\.59e\+306"):
        peak_factor(1e308, 64, 200)
    assert peak_factor(1e-3, 64, 200) == pytest.approx(1e-3 * (64 * 200) ** 0.5)
