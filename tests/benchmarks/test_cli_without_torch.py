"""`python -m benchmarks --quick` on a machine without torch: the torch backends are skipped with one
line, the run succeeds, and nothing is printed on stderr (simulated by blocking the torch import)."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TORCH_CPU = "pip install torch --index-url https://download.pytorch.org/whl/cpu"

SHIM = ("import sys; sys.modules['torch'] = None\n"
        "from benchmarks.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n")
TINY = ["--quick", "--threads", "1", "--configs", "tiny", "--repeats", "1", "--warmup", "1",
        "--max-time", "0.3", "--peak-sizes", "64", "--sweep-lengths", "4", "--sweep-d-models", "16",
        "--no-plots", "--quiet"]


def run(args):
    return subprocess.run([sys.executable, "-c", SHIM, *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": ROOT})


def test_quick_without_torch_skips_with_one_line(tmp_path):
    r = run([*TINY, "--out", str(tmp_path / "out")])
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""                                        # no noise, no error rows
    skip = [line for line in r.stdout.splitlines() if "skipping" in line]
    assert skip == ["torch is not installed: skipping the torch backends tf-cpu,nn-cpu "
                    f"(to include them, the CPU-only build: {TORCH_CPU})"]
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    assert {r["backend"] for r in doc["results"]} == {"np-f32", "np-f64"}
    assert "error" not in r.stdout.lower()


def test_explicit_torch_backend_without_torch_is_an_error(tmp_path):
    r = run([*TINY, "--backends", "np-f32,tf-cpu", "--out", str(tmp_path / "out")])
    assert r.returncode == 2
    assert r.stderr.strip() == ("python -m benchmarks: error: --backends: tf-cpu need PyTorch, "
                                f"which is not installed (the CPU-only build: {TORCH_CPU})")


def test_out_checked_before_measuring(tmp_path):
    (tmp_path / "f").write_text("x")
    r = run([*TINY, "--out", str(tmp_path / "f")])
    assert r.returncode == 2 and "--out" in r.stderr and "is a file" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
