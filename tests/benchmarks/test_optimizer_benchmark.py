"""benchmarks/optimizer.py: the fused-Adam comparison runs, pairs its rounds and prints every column
(no timing asserted)."""
import json

import numpy as np
import pytest

from benchmarks import optimizer as B


def test_tiny_run_writes_paired_ratios_and_prints_them(tmp_path, capsys):
    assert B.main(["--config", "tiny", "--threads", "1,2", "--repeats", "2", "--out",
                   str(tmp_path)]) == 0
    out = capsys.readouterr().out
    doc = json.loads((tmp_path / "optimizer.json").read_text())
    shapes = B.parameter_shapes("tiny")
    assert doc["parameters"] == sum(int(np.prod(s)) for s in shapes) and doc["tensors"] == len(shapes)
    assert [r["threads"] for r in doc["runs"]] == [1, 2]
    for r in doc["runs"]:
        assert set(r["median_ms"]) == set(B.VARIANTS) and all(v > 0 for v in r["median_ms"].values())
        assert all(n == 2 for n in r["samples"].values())
        assert r["fused_vs_plain"] > 0 and r["fused_vs_blocked"] > 0
        assert all(v >= 0 for v in r["peak_mib"].values())
        assert f"{r['fused_vs_plain']:.2f}" in out
    assert "fused/plain" in out and doc["load"]["stamp"] in out


def test_plain_step_allocates_temporaries_the_fused_one_does_not():
    """tracemalloc's peak: the plain step's whole-array temporaries vs the fused step's per-thread
    scratch (made on the first step, so the second allocates nothing of size)."""
    fns = B._setup([(256, 64), (300,)], threads=1)
    fns["fused"]()
    plain, fused = B._peak_bytes(fns["plain"]), B._peak_bytes(fns["fused"])
    assert plain >= 256 * 64 * 4                     # at least one parameter-sized temporary
    assert fused < 256 * 64 * 4 // 4


def test_bad_options_exit_with_a_message(capsys):
    with pytest.raises(SystemExit):
        B.main(["--config", "huge"])
    assert "--config" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        B.main(["--threads", "0"])
    assert "--threads" in capsys.readouterr().err
