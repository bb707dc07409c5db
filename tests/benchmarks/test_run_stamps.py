"""What every run carries: its thread count and how to change it, the machine's load before, during
and after, library output kept out of the table, and (interleaved) the settle waits."""
import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

import benchmarks.cli as cli  # noqa: E402
import benchmarks.run as run  # noqa: E402
from benchmarks.output import quarantine  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY = ["--configs", "tiny", "--backends", "np-f32,tf-cpu", "--workloads", "forward",
        "--repeats", "2", "--warmup", "1", "--peak-sizes", "64", "--no-sweeps", "--no-plots"]


def test_quarantine_sends_fds_to_the_log_and_progress_to_stderr(tmp_path, capfd):
    log_path = tmp_path / "third.log"
    with quarantine(str(log_path)) as log:
        os.write(1, b"library on stdout\n")
        os.write(2, b"library on stderr\n")
        log("our progress line")
    os.write(1, b"table\n")
    out, err = capfd.readouterr()
    assert out == "table\n" and err == "our progress line\n"
    assert log_path.read_text() == "library on stdout\nlibrary on stderr\n"


def test_library_output_during_a_run_stays_out_of_the_table(tmp_path, capfd, monkeypatch):
    real = run.measure_peak

    def noisy(fn, kind):                      # a library that prints while it is measured
        os.write(1, b"USDT: profiler_start (stdout)\n")
        os.write(2, b"USDT: profiler_stop (stderr)\n")
        return real(fn, kind)

    monkeypatch.setattr(run, "measure_peak", noisy)
    old = torch.get_num_threads()
    try:
        assert cli.main(["--threads", "1", "--interleave", *TINY, "--out", str(tmp_path)]) == 0
    finally:
        torch.set_num_threads(old)
    out, err = capfd.readouterr()
    assert "USDT" not in out and "USDT" not in err
    assert "[tiny]" in err and "[tiny]" not in out              # progress on stderr only
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["third_party_output"]["lines"] >= 4               # 2 backends x 2 lines
    assert "USDT: profiler_start" in (tmp_path / "third_party_output.log").read_text()
    assert f"{doc['third_party_output']['lines']} line(s) printed by libraries" in out
    # load: measured before, during and after; stamped above the table
    load = doc["load"]
    assert set(load) >= {"before", "during_other_processes_cores", "after", "loaded", "stamp"}
    assert load["before"]["utc"] and load["after"]["utc"]
    table_head = [line for line in out.splitlines() if line.startswith("1 thread(s)")]
    assert table_head == [f"1 thread(s) (set by --threads) | {load['stamp']}"]
    # isolation: every sample of each backend waited, and the waits are recorded
    for r in doc["results"]:
        before = r["settle"]["before_its_samples"]
        assert before["waits"] == r["timing"]["samples"] + 1           # + the warm-up
    assert doc["options"]["isolate"] is True


def test_no_isolate_records_no_waits(tmp_path):
    old = torch.get_num_threads()
    try:
        assert cli.main(["--threads", "1", "--interleave", "--no-isolate", "--no-memory", "--quiet",
                         *TINY, "--out", str(tmp_path)]) == 0
    finally:
        torch.set_num_threads(old)
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["options"]["isolate"] is False
    assert all("settle" not in r for r in doc["results"])


def test_default_threads_are_npformer_trains_and_the_table_says_how_to_change_them(tmp_path):
    from npformer.cli.defaults import DEFAULTS

    res = subprocess.run([sys.executable, "-m", "benchmarks", *TINY, "--no-memory", "--quiet",
                          "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True,
                         timeout=600, env={**os.environ, "PYTHONPATH": ROOT})
    assert res.returncode == 0, res.stderr
    doc = json.loads((tmp_path / "results.json").read_text())
    n = DEFAULTS["threads"]
    assert doc["threads"]["requested"] == n and doc["threads"]["torch_intra_op"] == n
    assert doc["threads"]["env"]["OMP_NUM_THREADS"] == str(n)
    assert doc["threads"]["source"] == "npformer train's default"
    assert f"{n} thread(s) (npformer train's default; change with --threads N)" in res.stdout
