"""The benchmark's smallest path end to end (tiny config, one repeat) and its JSON document.

No timing is asserted anywhere: only that the run completes, every requested measurement is present
and well-formed, the derived figures are consistent with their definitions, and the same-logits check
shows every backend computed the same model.
"""
import json
import math
import subprocess
import sys

import pytest

pytest.importorskip("torch")

from benchmarks.cli import main  # noqa: E402

BACKENDS = ["np-f32", "np-f32-plain", "np-f64", "tf-cpu", "nn-cpu"]
WORKLOADS = ["forward", "fwd_bwd", "train_step", "generate"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """One tiny run; 1 thread (fast on a busy CI machine), thread settings restored afterwards."""
    import torch

    from benchmarks.machine import apply_threads, blas_info

    old_torch = torch.get_num_threads()
    old_blas = [b.get("threads") for b in blas_info()]
    out = tmp_path_factory.mktemp("bench")
    argv = ["--threads", "1", "--configs", "tiny", "--backends", ",".join(BACKENDS), "--repeats", "1", "--warmup", "1",
            "--max-time", "0.5", "--peak-sizes", "64", "--sweep-lengths", "4,8",
            "--sweep-d-models", "16", "--sweep-backends", "np-f32,tf-cpu", "--out", str(out),
            "--quiet"]
    try:
        assert main(argv) == 0
    finally:
        apply_threads(old_blas[0] if old_blas and old_blas[0] else old_torch)
        torch.set_num_threads(old_torch)
    with open(out / "results.json") as f:
        return json.load(f), out


def _is_num(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def test_document_top_level(run):
    doc, _ = run
    for key in ("schema", "created", "command", "options", "machine", "threads", "peak", "configs",
                "backends", "workloads", "flop_formula", "results", "goals", "sweeps", "seconds"):
        assert key in doc, key
    assert doc["schema"] == "npformer-benchmarks/1"
    m = doc["machine"]
    for key in ("cpu", "available_cores", "python", "numpy", "torch"):
        assert m[key], key
    import re
    assert m["source"] is None or re.fullmatch(r"[0-9a-f]{7,40}(\+dirty)?", m["source"]), m["source"]
    assert doc["threads"]["requested"] >= 1
    assert doc["threads"]["torch_intra_op"] == doc["threads"]["requested"]
    assert [c["name"] for c in doc["configs"]] == ["tiny"]
    assert [b["name"] for b in doc["backends"]] == BACKENDS
    assert set(doc["workloads"]) == set(WORKLOADS)


def test_peak_measured_for_both_precisions(run):
    doc, _ = run
    peak = doc["peak"]["peak"]
    assert set(peak) >= {"cpu/float32", "cpu/float64"}
    assert all(v["gflops"] > 0 for v in peak.values())
    for part in ("measurements", "measurements_end"):          # measured at the start and the end
        assert {r["library"] for r in doc["peak"][part]} == {"numpy", "torch"}
        for r in doc["peak"][part]:
            key = f"{r['device']}/{r['precision']}"
            assert r["gflops"] <= peak[key]["gflops"]          # the peak is the best of both


def test_every_measurement_present_and_consistent(run):
    doc, _ = run
    rows = doc["results"]
    assert {(r["backend"], r["workload"]) for r in rows} == {(b, w) for b in BACKENDS for w in WORKLOADS}
    for r in rows:
        assert r["status"] == "ok", r
        t = r["timing"]
        for key in ("median", "q1", "q3", "iqr", "min", "max"):
            assert _is_num(t[key]) and t[key] >= 0, (r["backend"], key)
        assert t["min"] <= t["median"] <= t["max"] and t["samples"] >= 1
        assert isinstance(r["flops"], int) and r["flops"] > 0
        assert r["gflops"] == pytest.approx(r["flops"] / t["median"] / 1e9)
        peak = doc["peak"]["peak"][r["peak_key"]]["gflops"]
        assert r["peak_fraction"] == pytest.approx(r["gflops"] / peak)
        assert r["tokens_per_s"] == pytest.approx(r["tokens"] / t["median"])
        assert r["memory"]["method"] and (r["memory"]["peak_bytes"] is None
                                          or r["memory"]["peak_bytes"] >= 0)
        ref = next(x for x in rows if x["backend"] == "np-f32" and x["workload"] == r["workload"])
        assert r["time_vs_np_f32"] == pytest.approx(t["median"] / ref["timing"]["median"])
    # numpy peaks come from tracemalloc: a training step allocates activations
    np_step = next(r for r in rows if r["backend"] == "np-f32" and r["workload"] == "fwd_bwd")
    assert np_step["memory"]["peak_bytes"] > 0
    assert {r["peak_key"] for r in rows if r["backend"] == "np-f64"} == {"cpu/float64"}


def test_all_backends_compute_the_same_model(run):
    doc, _ = run
    for r in doc["results"]:
        chk = r["check"]
        assert "error" not in chk, chk
        # float32 rounding through a 1+1-layer model is ~1e-6 of the logits' scale (observed 3e-7 to
        # 9e-7); a wrong weight mapping or mask gives errors of order 1
        tol = 1e-12 if r["backend"] == "np-f64" else 1e-5
        assert chk["rel"] <= tol, (r["backend"], chk)


def test_memory_goal_measured_against_the_plain_path(run):
    """np-f32 (npformer.fast: FusedAdam, adopted gradients) beside np-f32-plain: the memory goal gets
    a value, and the two compute the same step (same logits check, same FLOPs)."""
    doc, _ = run
    (g,) = [g for g in doc["goals"] if "peak memory" in g["goal"]]
    step = {r["backend"]: r for r in doc["results"] if r["workload"] == "train_step"}
    want = step["np-f32"]["memory"]["peak_bytes"] / step["np-f32-plain"]["memory"]["peak_bytes"]
    assert g["value"] == pytest.approx(want) and g["target"] == 1.2 and g["met"] is (want <= 1.2)
    assert step["np-f32"]["flops"] == step["np-f32-plain"]["flops"]
    backends = {b["name"]: b for b in doc["backends"]}
    assert backends["np-f32"]["fast"] is True and backends["np-f32-plain"]["fast"] is False


def test_generation_flops_follow_the_cache_used(run):
    doc, _ = run
    gen = {r["backend"]: r for r in doc["results"] if r["workload"] == "generate"}
    assert gen["tf-cpu"]["kv_cache"] and not gen["nn-cpu"]["kv_cache"]
    assert gen["nn-cpu"]["flops"] > gen["tf-cpu"]["flops"] == gen["np-f32"]["flops"]


def test_sweeps_and_plots(run):
    doc, out = run
    sw = doc["sweeps"]
    assert sorted({r["n"] for r in sw["seq_len"]}) == [4, 8]
    assert {r["d_model"] for r in sw["d_model"]} == {16}
    assert all(r["status"] == "ok" for r in sw["seq_len"] + sw["d_model"])
    a, b = (next(r for r in sw["seq_len"] if r["n"] == n and r["backend"] == "np-f32") for n in (4, 8))
    assert b["flops_breakdown"]["attention"] == 4 * a["flops_breakdown"]["attention"]
    pytest.importorskip("matplotlib")
    names = sorted(p.name for p in out.glob("*.png"))
    assert names == ["sweep_d_model.png", "sweep_seq_len.png", "throughput.png"]
    assert all((out / n).stat().st_size > 1000 for n in names)


def test_bad_arguments_exit_2_with_a_message(tmp_path, capsys):
    assert main(["--configs", "huge", "--out", str(tmp_path)]) == 2
    assert "--configs" in capsys.readouterr().err
    assert main(["--backends", "np-f16", "--out", str(tmp_path)]) == 2
    assert "--backends" in capsys.readouterr().err
    assert main(["--workloads", "inference", "--out", str(tmp_path)]) == 2
    assert "--workloads" in capsys.readouterr().err
    assert not (tmp_path / "results.json").exists()


def test_module_entry_point_lists_everything():
    res = subprocess.run([sys.executable, "-m", "benchmarks", "--list", "--threads", "1"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    for name in ("tiny", "small", "base", "np-f32", "tf-cpu-compile", "nn-cpu", "train_step"):
        assert name in res.stdout


def test_interleaved_rounds_pair_the_backends(tmp_path):
    import torch

    old = torch.get_num_threads()
    try:
        assert main(["--threads", "1", "--interleave", "--configs", "tiny", "--backends",
                     "np-f32,tf-cpu", "--workloads", "forward,generate", "--repeats", "3",
                     "--warmup", "1", "--peak-sizes", "64", "--no-sweeps", "--no-memory",
                     "--no-plots", "--out", str(tmp_path), "--quiet"]) == 0
    finally:
        torch.set_num_threads(old)
    with open(tmp_path / "results.json") as f:
        doc = json.load(f)
    assert doc["options"]["interleave"] is True
    rows = doc["results"]
    assert len(rows) == 4 and all(r["status"] == "ok" for r in rows)
    for w in ("forward", "generate"):
        np32, tf = (next(r for r in rows if r["backend"] == b and r["workload"] == w)
                    for b in ("np-f32", "tf-cpu"))
        assert len(np32["round_samples"]) == len(tf["round_samples"]) == np32["timing"]["samples"]
        assert "interleaved" in tf["timing"]["timer"]
        paired = sorted(a / b for a, b in zip(tf["round_samples"], np32["round_samples"]))
        assert tf["paired_time_vs_np_f32"] == pytest.approx(paired[len(paired) // 2])
        assert np32["paired_time_vs_np_f32"] == pytest.approx(1.0)
