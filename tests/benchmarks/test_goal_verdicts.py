"""benchmarks/goals.py: the speed targets, judged on given rows (no timing measured here)."""
import pytest

from benchmarks.goals import caveats, evaluate_goals, format_goals, peak_target


def _row(config, backend, workload, median, peak_fraction=None):
    return {"config": config, "backend": backend, "workload": workload, "status": "ok",
            "timing": {"median": median}, "peak_fraction": peak_fraction}


def _by_text(goals, *words):
    (g,) = [g for g in goals if all(w in g["goal"] for w in words)]
    return g


def test_ratio_targets_per_config_and_peak_targets_per_thread_count():
    rows = [_row("base", "np-f32", "forward", 1.05), _row("base", "tf-cpu", "forward", 1.0),
            _row("base", "np-f32", "train_step", 1.2, 0.55), _row("base", "tf-cpu", "train_step", 1.0),
            _row("small", "np-f32", "forward", 1.25), _row("small", "tf-cpu", "forward", 1.0)]
    for threads, peak_met in ((1, False), (2, True)):
        goals = evaluate_goals(rows, threads, ["base", "small"])
        assert _by_text(goals, "base forward", "<= 1.10")["met"] is True         # 1.05
        assert _by_text(goals, "base train_step", "<= 1.10")["met"] is False      # 1.20
        assert _by_text(goals, "small forward", "<= 1.30")["met"] is True         # 1.25
        peak = _by_text(goals, "base train_step", "matmul peak")
        assert peak["met"] is peak_met and f"at {threads} thread(s)" in peak["goal"]
        assert _by_text(goals, "small train_step")["value"] is None                # not run
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
    assert "gpt2s-cpu train_step at 2 thread(s): time(np-f32) / time(tf-cpu) <= 1.10: not measured" in text
    assert "caveat: not interleaved" in text and "--batch-size 4" in text and "LOADED" in text
    assert "none measured" in format_goals([])
    assert "1.500  NOT met (on a LOADED machine)" in format_goals(goals, loaded=True)
    assert "(on a LOADED machine)" not in format_goals(goals, loaded=False)
