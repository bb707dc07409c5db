"""The thread-scaling table (python -m benchmarks --scaling) end to end on the tiny config: every
backend and thread count present, ratios consistent with the medians. Nothing about speed is asserted."""
import json

import pytest

pytest.importorskip("torch")

from benchmarks.cli import main  # noqa: E402
from benchmarks.scaling import thread_counts  # noqa: E402


def test_thread_counts():
    assert thread_counts(None, 16) == [1, 2, 16]
    assert thread_counts(None, 1) == [1]
    assert thread_counts([4, 1, 4], 16) == [1, 4]


def test_scaling_run_writes_every_row(tmp_path, capsys, monkeypatch):
    import torch

    import benchmarks.cli
    monkeypatch.setattr(benchmarks.cli, "available_cores", lambda: 2)   # 2 is refused on 1 core

    from benchmarks.machine import apply_threads, blas_info
    old_torch = torch.get_num_threads()
    old_blas = [b.get("threads") for b in blas_info()]
    try:
        assert main(["--scaling", "--configs", "tiny", "--scaling-threads", "1,2", "--repeats", "1",
                     "--warmup", "1", "--max-time", "0.2", "--out", str(tmp_path), "--quiet"]) == 0
    finally:
        apply_threads(old_blas[0] if old_blas and old_blas[0] else old_torch)
        torch.set_num_threads(old_torch)
    table = capsys.readouterr().out
    doc = json.loads((tmp_path / "scaling.json").read_text())
    rows = {(r["workload"], r["threads"], r["backend"]): r for r in doc["rows"]}
    assert not [r for r in doc["rows"] if "error" in r]
    expected = {(w, 1, b) for w in ("train_step", "forward") for b in ("np-plain", "tf-cpu")} | \
        {(w, 2, b) for w in ("train_step", "forward") for b in ("np-plain", "np-dp", "tf-cpu")}
    assert set(rows) == expected
    for (w, t, b), r in rows.items():
        assert r["median_s"] > 0 and r["q1_s"] <= r["median_s"] <= r["q3_s"]
        ref = rows[(w, 1, "np-plain" if b == "np-dp" else b)]["median_s"]
        assert r["speedup"] == pytest.approx(ref / r["median_s"])
        assert ("x_tf" in r) == (b != "tf-cpu")
        assert r["cores_busy"] > 0
    assert "np-dp" in table and "speedup" in table
    assert doc["isolate"] is True and set(doc["load"]) >= {"before", "after", "stamp", "loaded"}
    assert f"threads 1,2 (--scaling-threads) | {doc['load']['stamp']}" in table
