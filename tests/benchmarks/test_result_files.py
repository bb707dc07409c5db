"""The benchmarks' result files are written whole or not at all: a failure mid-write (a full disk,
a plot that fails to render) leaves the earlier file as it was and no temporary file beside it."""
from __future__ import annotations

import errno
import json
import os
import subprocess
import sys

import pytest

import npformer.io.files as npfiles
from benchmarks.files import new_output_problem, save_figure, write_json
from tests.paths import ROOT


def test_json_is_written_and_read_back(tmp_path):
    path = write_json(tmp_path / "sub" / "r.json", {"a": [1, 2], "dtype": tmp_path})
    assert json.loads(path.read_text()) == {"a": [1, 2], "dtype": str(tmp_path)}


def test_a_full_disk_keeps_the_earlier_results(tmp_path, monkeypatch):
    path = tmp_path / "results.json"
    path.write_text('{"earlier": true}')

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(npfiles.os, "fsync", full)
    with pytest.raises(OSError) as e:
        write_json(path, {"new": list(range(1000))})
    assert e.value.errno == errno.ENOSPC
    assert path.read_text() == '{"earlier": true}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]


class FailingFigure:
    """Renders half a PNG, then fails (as a backend error mid-render would)."""

    def savefig(self, buf, **kw):
        buf.write(b"\x89PNG half")
        raise RuntimeError("renderer failed")


def test_a_plot_that_fails_to_render_leaves_the_earlier_plot(tmp_path):
    path = tmp_path / "throughput.png"
    path.write_bytes(b"earlier plot")
    with pytest.raises(RuntimeError, match="renderer failed"):
        save_figure(FailingFigure(), path)
    assert path.read_bytes() == b"earlier plot"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["throughput.png"]


def test_an_output_path_is_refused_before_any_work_when_it_exists_or_sits_under_a_file(tmp_path):
    (tmp_path / "earlier.json").write_text("{}")
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    assert "exists" in new_output_problem(tmp_path / "earlier.json")
    assert "exists" in new_output_problem(tmp_path / "dangling")
    assert "is a file, not a folder" in new_output_problem(tmp_path / "notes.txt" / "r.json")
    assert new_output_problem(tmp_path / "new" / "deeper" / "r.json") is None   # write_json makes it
    assert new_output_problem(tmp_path / "r.json") is None


@pytest.mark.parametrize("script", ["budget.py", "batch_scan.py"])
def test_the_step_budget_scripts_refuse_an_existing_out_before_measuring(tmp_path, script):
    earlier = tmp_path / "budget.json"
    earlier.write_text('{"earlier": true}')
    run = subprocess.run([sys.executable, str(ROOT / "docs" / "benchmarks" / "gpt2-step-budget" / script),
                          "--out", str(earlier)], capture_output=True, text=True, timeout=120,
                         cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 2 and "the file exists" in run.stderr, run.stderr
    assert earlier.read_text() == '{"earlier": true}'
