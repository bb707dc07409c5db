"""`python -m benchmarks` refuses, before measuring anything, a configuration whose training step
cannot fit in the memory this process can allocate, in one line naming the configuration and the
figures; `--ignore-memory-check` starts it anyway, instead of running until a MemoryError or the
kernel's OOM kill."""
import pytest

import benchmarks.cli as cli
from benchmarks.configs import resolve_config
from tests.benchmarks.stop_at_measuring import Started, no_measuring  # noqa: F401 - autouse fixture

ARGS = ["--configs", "small", "--backends", "np-f32", "--no-plots", "--no-sweeps"]


def test_a_config_too_big_for_the_memory_is_refused_in_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:                  # nothing measured: the line and status 2
        raise SystemExit(cli.main([*ARGS, "--batch-size", "100000000", "--out", str(tmp_path / "o")]))
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("python -m benchmarks: error: --configs small (batch 100000000, "
                             "length 32): a training step holds at least "), err
    assert "more than the " in err[0] and "--ignore-memory-check" in err[0], err
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())


def test_the_flag_starts_it_anyway(tmp_path):
    with pytest.raises(Started):
        cli.main([*ARGS, "--batch-size", "100000000", "--ignore-memory-check",
                  "--out", str(tmp_path / "o")])


def test_a_config_that_fits_starts(tmp_path, monkeypatch):
    import benchmarks.memory_check as memory_check
    monkeypatch.setattr(memory_check, "available_memory", lambda: 64 << 20)   # 64 MiB: small fits
    with pytest.raises(Started):
        cli.main([*ARGS, "--out", str(tmp_path / "o")])


def test_the_estimate_counts_every_attention_sublayer_and_the_logits():
    import benchmarks.memory_check as memory_check
    bc = resolve_config("small")                          # 4+4 layers, 4 heads, batch 8, 32 -> 32
    parts = dict((w.split(" ")[0], n) for w, n in memory_check.training_step_parts(bc, 4))
    assert parts["attention"] == 8 * 4 * (4 * 32 * 32 + 4 * (32 * 32 + 32 * 32)) * 4
    assert parts["logits"] == 8 * 32 * 1000 * 4


def test_cuda_only_configs_and_gpu_backends_are_not_held_to_this_machines_memory(monkeypatch):
    import benchmarks.memory_check as memory_check
    from benchmarks.backends import get_backend
    monkeypatch.setattr(memory_check, "available_memory", lambda: 1 << 20)    # 1 MiB
    memory_check.check_configs_fit([resolve_config("gpt2s")], [get_backend("np-f32")])
    memory_check.check_configs_fit([resolve_config("small")], [get_backend("tf-cuda-fp32")])
    with pytest.raises(ValueError, match=r"^--configs small \(batch 8, length 32\)"):
        memory_check.check_configs_fit([resolve_config("small")], [get_backend("np-f32")])
