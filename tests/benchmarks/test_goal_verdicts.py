"""benchmarks/goals.py: the speed targets, judged on given rows (no timing measured here)."""
import pytest

from benchmarks.goals import caveats, evaluate_goals, format_goals, peak_target


def _row(config, backend, workload, median, peak_fraction=None, peak_bytes=None):
    return {"config": config, "backend": backend, "workload": workload, "status": "ok",
            "timing": {"median": median}, "peak_fraction": peak_fraction,
            "memory": {"peak_bytes": peak_bytes}}


def _by_text(goals, *words):
    (g,) = [g for g in goals if all(w in g["goal"] for w in words)]
    return g


def test_ratio_targets_per_config_and_peak_targets_per_thread_count():
    rows = [_row("base", "np-f32", "forward", 1.05), _row("base", "tf-cpu", "forward", 1.0),
            _row("base", "np-f32", "train_step", 1.2, 0.55), _row("base", "tf-cpu", "train_step", 1.0),
            _row("small", "np-f32", "forward", 1.25), _row("small", "tf-cpu", "forward", 1.0)]
    for threads, other, peak_met in ((1, 2, False), (2, 1, True)):
        goals = evaluate_goals(rows, threads, ["base", "small"])
        at = f"at {threads} thread(s)"
        assert _by_text(goals, "base forward", at, "<= 1.10")["met"] is True         # 1.05
        assert _by_text(goals, "base train_step", at, "<= 1.10")["met"] is False      # 1.20
        assert _by_text(goals, "small forward", at, "<= 1.30")["met"] is True         # 1.25
        peak = _by_text(goals, "base train_step", at, "matmul peak")
        assert peak["met"] is peak_met
        assert _by_text(goals, "small train_step", at, "<= 1.30")["value"] is None    # not run
        # the other thread count's goals are listed, not measured, with the flag that measures them
        for g in [g for g in goals if f"at {other} thread(s)" in g["goal"]]:
            assert g["value"] is None and g["needs"] == f"--threads {other}"
        assert len([g for g in goals if f"at {other} thread(s)" in g["goal"]]) == 5  # 2 x 2 ratios + 1 peak
    assert peak_target(1) == 0.60 and peak_target(2) == 0.50


def test_interleaved_rows_use_the_median_of_paired_ratios():
    a = _row("base", "np-f32", "forward", 10.0)
    b = _row("base", "tf-cpu", "forward", 1.0)
    a["round_samples"], b["round_samples"] = [1.0, 3.0, 2.2], [1.0, 1.0, 2.0]   # ratios 1, 3, 1.1
    (g, *_) = evaluate_goals([a, b], 1, ["base"])
    assert g["value"] == pytest.approx(1.1) and g["met"] is True


def test_printed_verdicts_and_caveats():
    rows = [_row("gpt2s-cpu", "np-f32", "forward", 1.5), _row("gpt2s-cpu", "tf-cpu", "forward", 1.0)]
    goals = evaluate_goals(rows, 2, ["gpt2s-cpu"])
    text = format_goals(goals, caveats(False, {"batch_size": 4}, True))
    assert "gpt2s-cpu forward at 2 thread(s): time(np-f32) / time(tf-cpu) <= 1.10: 1.500  NOT met" in text
    assert ("gpt2s-cpu train_step at 2 thread(s): time(np-f32) / time(tf-cpu) <= 1.10: not measured in "
            "this run (measure with --backends np-f32,tf-cpu --workloads train_step)") in text
    assert ("gpt2s-cpu forward at 1 thread(s): time(np-f32) / time(tf-cpu) <= 1.10: not measured in "
            "this run (measure with --threads 1)") in text
    assert "caveat: not interleaved" in text and "--batch-size 4" in text and "LOADED" in text
    assert "none measured" in format_goals([])
    assert "1.500  NOT met (on a LOADED machine)" in format_goals(goals, loaded=True)
    assert "(on a LOADED machine)" not in format_goals(goals, loaded=False)


def test_decoding_goal_against_transformers_generate():
    rows = [_row("gpt2s-cpu", "np-f32", "generate", 0.30), _row("gpt2s-cpu", "hf-cpu", "generate", 0.32)]
    g = _by_text(evaluate_goals(rows, 1, ["gpt2s-cpu"]), "generate", "transformers.generate")
    assert g["value"] == pytest.approx(0.30 / 0.32) and g["met"] is True and g["target"] == 1.0
    rows[0]["timing"]["median"] = 0.33                                          # slower: not level
    g = _by_text(evaluate_goals(rows, 1, ["gpt2s-cpu"]), "transformers.generate")
    assert g["met"] is False
    g = _by_text(evaluate_goals(rows[:1], 1, ["gpt2s-cpu"]), "transformers.generate")
    assert g["value"] is None and "hf-cpu" in g["needs"]
    assert not [g for g in evaluate_goals(rows, 1, ["base"]) if "generate" in g["goal"]]


@pytest.mark.parametrize("fast_mib, met", [(110, True), (120, True), (121, False)])
def test_memory_goal_compares_the_fast_path_with_the_plain_one(fast_mib, met):
    rows = [_row("base", "np-f32", "train_step", 1.0, peak_bytes=fast_mib * 2**20),
            _row("base", "np-f32-plain", "train_step", 1.1, peak_bytes=100 * 2**20)]
    g = _by_text(evaluate_goals(rows, 1, ["base"]), "peak memory")
    assert g["value"] == pytest.approx(fast_mib / 100) and g["met"] is met
    assert "np-f32 / np-f32-plain <= 1.2" in format_goals([g])
    g = _by_text(evaluate_goals(rows[:1], 1, ["base"]), "peak memory")               # no plain row
    assert g["value"] is None and "np-f32-plain" in g["needs"]
    assert not [g for g in evaluate_goals(rows, 1, ["tiny"]) if "memory" in g["goal"]]


def test_memory_goal_counts_what_data_parallel_replicas_hold_between_steps():
    fast = _row("base", "np-f32", "train_step", 1.0, peak_bytes=90 * 2**20)
    fast["memory"]["resident_extra_bytes"] = 40 * 2**20          # the other replica's gradients
    rows = [fast, _row("base", "np-f32-plain", "train_step", 1.1, peak_bytes=100 * 2**20)]
    g = _by_text(evaluate_goals(rows, 1, ["base"]), "peak memory")
    assert g["value"] == pytest.approx(1.3) and g["met"] is False     # 90 alone would pass
    assert "40 MiB" in g["goal"]
