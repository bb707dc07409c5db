"""The benchmarks' result files are written whole or not at all: a failure mid-write (a full disk,
a plot that fails to render) leaves the earlier file as it was and no temporary file beside it."""
from __future__ import annotations

import errno
import json

import pytest

import npformer.io.files as npfiles
from benchmarks.files import save_figure, write_json


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
