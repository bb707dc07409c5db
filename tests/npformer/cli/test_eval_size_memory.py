"""`--eval-size N` is refused before anything is drawn when drawing and evaluating N held-out examples
cannot fit in memory, and the refusal names `--eval-size`. The check used to count only the set's
token ids (176 bytes an example for the default reverse task) while drawing it holds more than twice
that at once (and the masked LM's evaluation masks the whole set at once): `evaluate --eval-size
100000000` passed it and then grew until the machine ran out; a larger value was refused as `n:`."""
import pytest

import npformer.data.tasks as tasks
import npformer.guards.rules as rules
from npformer.data.heldout_memory import heldout_bytes_per_example
from npformer.data.registry import make_any_task
from tests.npformer.conftest import run_cli as run
from tests.npformer.conftest import tiny_train_args

GIB = 2 ** 30


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    from npformer.cli.main import main
    folder = tmp_path_factory.mktemp("eval_size")
    out = {}
    for task in ("reverse", "mlm"):
        out[task] = str(folder / f"{task}.npz")
        assert main(["train", *tiny_train_args(steps=1, max_len=10), "--task", task,
                     "--save", out[task]]) == 0
    return out


@pytest.fixture
def one_gib_machine(monkeypatch):
    """A 1 GiB machine on which nothing may be drawn: a set that passed the check is a failure."""
    monkeypatch.setattr(rules, "physical_memory", lambda: GIB)

    def never(*a, **kw):
        raise AssertionError("the held-out set was drawn")
    monkeypatch.setattr(tasks.Task, "_random_sources", never)


# (task, --eval-size): the token ids alone (176 bytes an example at max_len 10) fit in 1 GiB,
# what drawing (and, for mlm, masking) them holds does not
CASES = [("reverse", 4_000_000), ("mlm", 1_000_000)]


@pytest.mark.parametrize("task,n", CASES)
def test_evaluate_refuses_an_eval_size_whose_evaluation_cannot_fit(checkpoints, task, n,
                                                                   one_gib_machine, capsys):
    code, out, err = run(["evaluate", checkpoints[task], "--eval-size", str(n)], capsys)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"npformer evaluate: error: --eval-size: expected a number of examples "
                               f"whose arrays fit in this machine's available memory (1.0 GiB), got {n:,}"), err
    assert "n: " not in lines[0]


def test_train_names_eval_size_too(one_gib_machine, capsys):
    argv = tiny_train_args(steps=1, max_len=10, eval_size=4_000_000)
    code, out, err = run(["train", *argv], capsys)
    assert code == 2, err
    assert err.strip().splitlines()[-1].startswith("npformer train: error: --eval-size: expected a "
                                                   "number of examples whose arrays fit"), err


@pytest.mark.parametrize("name", ["reverse", "sort", "majority", "mlm"])
@pytest.mark.parametrize("max_len", [3, 12])
def test_the_estimate_covers_the_measured_peak(name, max_len):
    """Drawing (and, for mlm, masking for evaluation) a held-out set peaks below the estimate."""
    import tracemalloc
    task = make_any_task(name=name, max_len=max_len, num_symbols=6)
    n = 4000
    tracemalloc.start()
    try:
        ex = task.heldout(n)
        if name == "mlm":
            next(iter(task.iterate(ex, 64)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    per_example, _ = heldout_bytes_per_example(task)
    assert peak <= n * per_example
    assert peak >= n * per_example / 2                       # honest: not a bound far above


def test_bounded_held_out_sets_need_no_estimate():
    assert heldout_bytes_per_example(make_any_task(name="lm")) is None
    assert heldout_bytes_per_example(make_any_task(name="pairs")) is None
