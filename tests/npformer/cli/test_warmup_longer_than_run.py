"""A run shorter than its warm-up never reaches the peak learning rate its header names: the header
says so, with the rate the last step gets (`--steps 200` with --task lm's 400 warm-up steps)."""
from npformer.cli.main import main
from tests.npformer.conftest import tiny_train_args


def header(capsys) -> str:
    return next(line for line in capsys.readouterr().out.splitlines() if "warm-up steps" in line)


def test_a_run_ending_inside_the_warm_up_says_the_peak_is_not_reached(capsys):
    assert main(["train", *tiny_train_args(steps=2, warmup=8, lr=0.004)]) == 0
    line = header(capsys)
    assert "peak lr 0.004 after 8 warm-up steps (not reached: the run ends at step 2, lr 0.001)" in line, line


def test_a_run_past_the_warm_up_has_no_such_note(capsys):
    assert main(["train", *tiny_train_args(steps=3, warmup=3)]) == 0
    assert "not reached" not in header(capsys)


def test_a_resumed_run_counts_the_steps_before_it(tmp_path, capsys):
    run = tmp_path / "run.npz"
    assert main(["train", *tiny_train_args(steps=2, warmup=4), "--save", str(run)]) == 0
    capsys.readouterr()
    assert main(["train", "--resume", str(run), "--steps", "2", "--no-progress"]) == 0
    assert "not reached" not in header(capsys)                   # steps 3 and 4 reach the peak
