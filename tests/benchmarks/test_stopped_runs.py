"""A benchmark run stopped before its end (Ctrl-C, SIGTERM, a full disk) answers in one line and
leaves nothing in --out that would make the next run into the same folder be refused."""
from __future__ import annotations

import errno
import os

import pytest

import benchmarks.peak
from benchmarks.cli import main
from npformer.cli.option_rules import Terminated

QUICK = ["--quick", "--configs", "tiny", "--no-sweeps", "--no-plots", "--quiet"]


def stop_with(exc):
    def measure_peaks(*args, **kwargs):
        raise exc
    return measure_peaks


@pytest.mark.parametrize("exc, code, words", [
    (KeyboardInterrupt(), 130, "interrupted (Ctrl-C)"),
    (Terminated(), 143, "terminated (SIGTERM)"),
    (OSError(errno.ENOSPC, "No space left on device", "out/results.json"), 2,
     "cannot write out/results.json: No space left on device"),
    (MemoryError("Unable to allocate 5.96 GiB for an array with shape (100000000, 8)"), 2,
     "out of memory (Unable to allocate 5.96 GiB"),
])
def test_a_stopped_run_answers_in_one_line_and_leaves_no_files(tmp_path, monkeypatch, capsys,
                                                               exc, code, words):
    out = tmp_path / "bench"
    monkeypatch.setattr(benchmarks.peak, "measure_peaks", stop_with(exc))
    assert main(QUICK + ["--out", str(out)]) == code
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0] and "Traceback" not in err[0], err
    assert not out.exists()                      # the folder the run made is gone with its log


def test_a_stopped_run_keeps_what_the_folder_held_before(tmp_path, monkeypatch, capsys):
    out = tmp_path / "bench"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    monkeypatch.setattr(benchmarks.peak, "measure_peaks", stop_with(KeyboardInterrupt()))
    assert main(QUICK + ["--out", str(out)]) == 130
    assert sorted(os.listdir(out)) == ["notes.txt"]
    assert (out / "notes.txt").read_text() == "mine"
    # the next run into the same folder is not refused as an earlier run's
    monkeypatch.setattr(benchmarks.peak, "measure_peaks", stop_with(OSError(errno.EIO, "I/O error")))
    assert main(QUICK + ["--out", str(out)]) == 2
    assert "holds" not in capsys.readouterr().err
