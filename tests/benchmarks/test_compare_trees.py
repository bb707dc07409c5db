"""benchmarks/compare_trees.py refuses bad arguments before starting any worker (nothing is timed)."""
from __future__ import annotations

import json

import pytest

from benchmarks.compare_trees import main
from tests.paths import ROOT


@pytest.mark.parametrize("args, needle", [
    (["--root", str(ROOT)], "at least two"),
    (["--root", str(ROOT), "--root", "/nonexistent"], "no npformer package"),
    (["--root", str(ROOT), "--root", str(ROOT), "--configs", "huge"], "--configs"),
    (["--root", str(ROOT), "--root", str(ROOT), "--settle", "-1"], "--settle"),
    (["--root", str(ROOT), "--root", str(ROOT), "--workload", "generate"], "--workload"),
    (["--root", str(ROOT), "--root", str(ROOT), "--repeats", "1"], "--repeats"),
])
def test_bad_arguments_are_one_usage_error(args, needle, capsys):
    with pytest.raises(SystemExit) as e:
        main(args)
    assert e.value.code == 2 and needle in capsys.readouterr().err


def test_an_existing_out_file_is_never_replaced(tmp_path, capsys):
    out = tmp_path / "old.json"
    out.write_text("keep me")
    with pytest.raises(SystemExit):
        main(["--root", str(ROOT), "--root", str(ROOT), "--out", str(out)])
    assert out.read_text() == "keep me" and "exists" in capsys.readouterr().err


def test_a_causal_config_times_a_causal_lm(tmp_path, monkeypatch):
    """A config marked causal (gpt2s-cpu's kind) builds a CausalLM fed the target tokens alone; a
    tiny one here, two samples per root, both roots this checkout."""
    import benchmarks.compare_trees as ct
    tiny = dict(batch=2, src_len=0, tgt_len=5, d_model=16, num_heads=2, d_ff=32, layers=1,
                vocab=50, share=True, causal=True)
    monkeypatch.setitem(ct.CONFIGS, "tiny-causal", tiny)
    assert ct.CONFIGS["gpt2s-cpu"]["causal"] is True
    out = tmp_path / "r.json"
    for workload in ("forward", "train_step"):
        out.unlink(missing_ok=True)
        assert main(["--root", str(ROOT), "--root", str(ROOT), "--configs", "tiny-causal",
                     "--threads", "1", "--repeats", "2", "--settle", "0", "--workload", workload,
                     "--out", str(out)]) == 0
        (result,) = json.loads(out.read_text())["results"]
        assert result["config"] == "tiny-causal" and all(len(s) == 2 for s in result["samples_s"])
