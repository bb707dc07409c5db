"""`npformer train`'s early memory check (npformer.cli.train_memory) counts what a training step holds at
once and compares it with the memory this process can still allocate.

Before: each array was compared ALONE with the machine's TOTAL memory, and only one layer's attention
weights were counted, so a run whose layers' attention weights together could never fit started,
built its model and drew its data; memory other processes held counted as ours."""
import tracemalloc

import pytest

import npformer.guards.rules as rules
import npformer.training.train as T
from npformer.cli.main import main
from tests.npformer.conftest import tiny_train_args


def never(*a, **kw):
    raise AssertionError("the model was built")


def test_every_layers_attention_weights_are_counted_together(monkeypatch, capsys):
    # 100 rows x 2 heads x 9 x 9 tokens x 4 bytes per attention sublayer; an encoder-decoder of 2 + 2
    # layers has 2 + 2 x 2 = 6 of them, each kept for the backward pass
    one = 100 * 2 * 9 * 9 * 4
    monkeypatch.setattr(rules, "physical_memory", lambda: 2 * one)      # one alone fits, 6 cannot
    monkeypatch.setattr(T, "build_model", never)
    argv = tiny_train_args(batch_size=100, max_len=9, layers=2)
    argv[argv.index("--layers") + 1] = "2"
    assert main(["train", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "--max-len 9 with --batch-size 100" in err[0]
    assert "of 6 attention sublayer(s)" in err[0] and "this machine has available" in err[0]


def test_the_sum_is_refused_when_each_array_alone_fits(monkeypatch, capsys):
    """The attention weights (6 x 64,800 B) and the held-out ids (2 x 2,000 x 9 x 8 B = 288,000 B)
    each fit in 400,000 bytes; together they do not."""
    monkeypatch.setattr(rules, "physical_memory", lambda: 400_000)
    monkeypatch.setattr(T, "build_model", never)
    argv = tiny_train_args(batch_size=100, max_len=9, eval_size=2000)
    argv[argv.index("--layers") + 1] = "2"
    assert main(["train", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "a training step holds at least" in err[0] and "held-out set's token ids" in err[0]


def fake_files(files):
    def read(path):
        return files.get(path)
    return read


def test_available_memory_is_the_least_of_total_available_and_the_cgroup_headroom(monkeypatch):
    monkeypatch.setattr(rules, "physical_memory", lambda: 64 * 2 ** 30)
    meminfo = "MemTotal: 67108864 kB\nMemFree: 1000 kB\nMemAvailable: 3145728 kB\nSwapFree: 1048576 kB\n"
    files = {"/proc/meminfo": meminfo}
    monkeypatch.setattr(rules, "_read", fake_files(files))
    assert rules.available_memory() == (3145728 + 1048576) * 1024       # 4 GiB: available + swap
    files.update({"/proc/self/cgroup": "0::/job\n", "/sys/fs/cgroup/job/memory.max": "2147483648\n",
                  "/sys/fs/cgroup/job/memory.current": "1610612736\n",
                  "/sys/fs/cgroup/job/memory.stat": "anon 1\ninactive_file 104857600\n"})
    assert rules.available_memory() == 2147483648 - 1610612736 + 104857600  # the container's limit
    files["/sys/fs/cgroup/job/memory.max"] = "max\n"
    assert rules.available_memory() == (3145728 + 1048576) * 1024       # no limit: meminfo again
    monkeypatch.setattr(rules, "_read", fake_files({}))
    assert rules.available_memory() == 64 * 2 ** 30                      # nothing else said: total


def test_memory_held_by_others_is_not_ours(monkeypatch, capsys):
    """A machine of 64 GiB with 1 MiB available refuses what needs more than 1 MiB."""
    monkeypatch.setattr(rules, "physical_memory", lambda: 64 * 2 ** 30)
    monkeypatch.setattr(rules, "_meminfo_available", lambda: 2 ** 20)
    monkeypatch.setattr(rules, "_cgroup_headroom", lambda: None)
    monkeypatch.setattr(T, "build_model", never)
    argv = tiny_train_args(batch_size=1000, max_len=20)                 # 1000 x 2 x 20 x 20 x 4 B each
    assert main(["train", *argv]) == 2
    err = capsys.readouterr().err
    assert "more than the 1.0 MiB this machine has available" in err, err


@pytest.mark.parametrize("task", ["reverse", "majority", "lm", "mlm"])
def test_a_run_that_fits_in_what_it_really_used_is_not_refused(task, monkeypatch, capsys):
    """The check's bound stays below what a run really allocates: measure a run's peak, then say that
    is all the memory there is; the same run still passes every check."""
    argv = ["train", *tiny_train_args(batch_size=64, eval_size=50, task=task,
                                      **({"max_len": None, "num_symbols": None} if task == "lm" else
                                         {"max_len": 12}))]
    tracemalloc.start()
    try:
        assert main(argv) == 0
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    capsys.readouterr()
    monkeypatch.setattr(rules, "physical_memory", lambda: peak)
    assert main(argv) == 0, capsys.readouterr().err
