"""benchmarks/order_bias.py: the figures it pulls out of a run, and its usage errors."""
import pytest

from benchmarks.order_bias import format_summary, main, summarize


def _row(backend, samples, iqr, settle_after=None):
    r = {"backend": backend, "workload": "forward", "status": "ok", "round_samples": samples,
         "timing": {"median": sorted(samples)[len(samples) // 2], "iqr": iqr}}
    if settle_after is not None:
        r["settle"] = {"after_its_samples": {"waits": 3, "mean_s": settle_after}}
    return r


def test_summary_pairs_rounds_and_reports_numpys_spin():
    doc = {"options": {"isolate": True, "backends": ["np-f32", "nn-cpu", "tf-cpu"]},
           "load": {"stamp": "idle: ..."},
           "results": [_row("np-f32", [2.0, 2.0, 2.0], 0.0, settle_after=0.12),
                       _row("tf-cpu", [1.0, 1.5, 1.0], 0.25),
                       _row("nn-cpu", [1.0, 1.0, 2.0], 0.5)]}
    s = summarize(doc, "forward")
    assert s["tf/nn"] == pytest.approx(1.0)          # per-round ratios 1, 1.5, 0.5
    assert s["np/tf"] == pytest.approx(2.0)          # 2, 1.33, 2
    assert s["np-f32 spin ms"] == pytest.approx(120.0)
    assert s["tf-cpu IQR ms"] == pytest.approx(250.0)
    line = format_summary([s]).splitlines()[1]
    assert line.startswith("True | np-f32,nn-cpu,tf-cpu | ") and line.endswith("[idle: ...]")


def test_one_config_and_one_workload(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--configs", "small,base", "--out", "unused"])
    assert e.value.code == 2
    assert "--configs/--workloads: expected one name each" in capsys.readouterr().err
