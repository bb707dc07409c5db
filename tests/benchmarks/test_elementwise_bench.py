"""`python -m benchmarks.elementwise`: bad options are one-line usage errors before any measuring;
a tiny run prints every variant, the training step and the load stamp, and writes its JSON."""
from __future__ import annotations

import json

import numpy as np
import pytest

import benchmarks.ab_rounds as ab
import benchmarks.elementwise as ew


@pytest.mark.parametrize("argv, match", [
    (["--configs", "nope"], "--configs: unknown ['nope']"),
    (["--threads", "0"], "--threads: expected comma-separated positive ints, got '0'"),
    (["--threads", "x"], "--threads: expected comma-separated positive ints, got 'x'"),
    (["--repeats", "0"], "--repeats: expected a positive int, got 0"),
])
def test_bad_options_are_usage_errors(argv, match, capsys, monkeypatch):
    monkeypatch.setattr(ew, "interleave", lambda *a, **k: pytest.fail("measured anyway"))
    with pytest.raises(SystemExit) as e:
        ew.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert match in err and "Traceback" not in err


def test_out_that_is_a_file_is_refused_before_measuring(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(ew, "interleave", lambda *a, **k: pytest.fail("measured anyway"))
    f = tmp_path / "f"
    f.write_text("keep")
    with pytest.raises(SystemExit):
        ew.main(["--out", str(f)])
    assert f.read_text() == "keep"
    assert f"--out {f}: is a file; expected a folder" in capsys.readouterr().err


def test_a_tiny_run_reports_every_variant_and_the_step(tmp_path, capsys, monkeypatch):
    import benchmarks.load as load
    monkeypatch.setattr(load, "sample", lambda seconds=1.0: {"other_processes_cores": 0.0,
                                                             "cpus": 2, "utc": "2026-01-01T00:00"})
    monkeypatch.setattr(ab, "settle", lambda: None)
    assert ew.main(["--configs", "tiny", "--threads", "1,2", "--repeats", "1",
                    "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    for variant in ("relu", "layernorm", "attention softmax", "cross entropy", "dropout apply",
                    "dropout draw", "q|k|v GEMMs", "TRAIN STEP", "fast-2/plain"):
        assert variant in out, variant
    doc = json.loads((tmp_path / "results.json").read_text())
    rows = {(r["threads"], r["variant"]) for r in doc["results"]}
    assert (2, "TRAIN STEP") in rows and (1, "cross entropy") in rows
    assert "stamp" in doc["load"]


@pytest.mark.parametrize("name, threads, expected", [("np-f32", 2, 2), ("np-f64", 1, 1),
                                                     ("np-f32-plain", 2, None)])
def test_numpy_backends_run_the_fast_variants_on_the_run_threads_except_plain(name, threads,
                                                                               expected):
    from benchmarks.backends import BACKENDS, make_inputs, make_session, master_weights
    from benchmarks.configs import CONFIGS
    from npformer.fast.accelerate import accelerated_threads
    bc = CONFIGS["tiny"]
    inputs = make_inputs(bc, bc.transformer_config())
    s = make_session(bc, BACKENDS[name], master_weights(bc), inputs, threads)
    assert accelerated_threads(s.model) == expected
    assert accelerated_threads(s.loss) == expected
    assert np.isfinite(float(s.fn("train_step")()))


def test_paired_ratio_is_the_median_of_round_by_round_ratios():
    # rounds 1..3: 2/1, 9/3, 4/4 -> ratios 2, 3, 1 -> median 2 (the ratio of medians would be 4/3)
    res = {"a": {"wall_samples": [2.0, 9.0, 4.0]}, "b": {"wall_samples": [1.0, 3.0, 4.0]}}
    assert ab.paired_ratio(res, "a", "b", "wall_samples") == 2.0
    assert np.isnan(ab.paired_ratio({"a": {"w": []}, "b": {"w": []}}, "a", "b", "w"))
