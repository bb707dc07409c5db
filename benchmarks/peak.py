"""The machine's own matmul peak, measured in the same run as the benchmark.

Square n x n @ n x n products (2n^3 FLOPs) for a few n, float32 and float64, with NumPy (its BLAS)
and torch (its BLAS/oneDNN), on the same thread count as the benchmark. The peak per precision is the
best median GFLOP/s over sizes and libraries: "the fastest this machine multiplies matrices from
Python", the yardstick every backend's GFLOP/s is divided by. On CUDA: float32 with TF32 off, TF32,
and bfloat16. Nothing theoretical (clock x SIMD width) is used: on a shared virtual machine the
measured figure is the honest one.
"""
from __future__ import annotations

from typing import Any

from benchmarks.timing import time_numpy, time_torch


def _gflops(n: int, seconds: float) -> float:
    return 2.0 * n ** 3 / seconds / 1e9


def measure_numpy(sizes, dtypes=("float32", "float64"), repeats: int = 5,
                  max_time: float = 3.0) -> list[dict[str, Any]]:
    import numpy as np

    rows = []
    rng = np.random.default_rng(0)
    for dt in dtypes:
        for n in sizes:
            a = rng.standard_normal((n, n)).astype(dt)
            b = rng.standard_normal((n, n)).astype(dt)
            c = np.empty((n, n), dtype=dt)
            t = time_numpy(lambda: np.matmul(a, b, out=c), warmup=1, repeats=repeats,
                           max_time=max_time)
            rows.append({"library": "numpy", "device": "cpu", "precision": dt, "n": n,
                         "median_s": t.median, "gflops": _gflops(n, t.median)})
    return rows


def measure_torch(sizes, threads: int, device: str = "cpu", precisions=("float32", "float64"),
                  repeats: int = 5, max_time: float = 3.0) -> list[dict[str, Any]]:
    """precisions: float32, float64, and on CUDA also "tf32" (float32 inputs, TF32 math) and bfloat16."""
    import torch

    rows = []
    cuda = device.startswith("cuda")
    gen = torch.Generator(device="cpu").manual_seed(0)
    for prec in precisions:
        dt = {"float32": torch.float32, "tf32": torch.float32, "float64": torch.float64,
              "bfloat16": torch.bfloat16}[prec]
        for n in sizes:
            a = torch.randn(n, n, generator=gen).to(device=device, dtype=dt)
            b = torch.randn(n, n, generator=gen).to(device=device, dtype=dt)
            c = torch.empty(n, n, device=device, dtype=dt)
            old = torch.backends.cuda.matmul.allow_tf32
            torch.backends.cuda.matmul.allow_tf32 = prec == "tf32"
            try:
                t = time_torch(lambda: torch.matmul(a, b, out=c), threads=threads, cuda=cuda,
                               warmup=1, repeats=repeats, max_time=max_time)
            finally:
                torch.backends.cuda.matmul.allow_tf32 = old
            rows.append({"library": "torch", "device": "cuda" if cuda else "cpu", "precision": prec,
                         "n": n, "median_s": t.median, "gflops": _gflops(n, t.median)})
    return rows


def measure_peaks(threads: int, quick: bool = False, with_torch: bool = True,
                  with_cuda: bool = False, sizes=None) -> dict[str, Any]:
    """All peak measurements plus the best GFLOP/s per "device/precision" key (e.g. "cpu/float32")."""
    sizes = tuple(sizes) if sizes else ((1024,) if quick else (512, 1024, 2048))
    rows = measure_numpy(sizes, repeats=3 if quick else 7)
    if with_torch:
        rows += measure_torch(sizes, threads, repeats=3 if quick else 7)
        if with_cuda:
            rows += measure_torch((2048, 4096) if quick else (2048, 4096, 8192), threads,
                                  device="cuda", precisions=("float32", "tf32", "bfloat16"),
                                  repeats=5 if quick else 20)
    best: dict[str, dict[str, Any]] = {}
    for r in rows:
        key = f"{r['device']}/{r['precision']}"
        if key not in best or r["gflops"] > best[key]["gflops"]:
            best[key] = {"gflops": r["gflops"], "library": r["library"], "n": r["n"]}
    return {"method": "best median GFLOP/s of square matmuls (2n^3 FLOPs), same threads as the run",
            "sizes": list(sizes), "measurements": rows, "peak": best}


def peak_key(device: str, precision: str) -> str:
    """Which peak a backend is judged against: its device and the precision its matmuls run in."""
    return f"{'cuda' if device.startswith('cuda') else 'cpu'}/{precision}"


def combine_peaks(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """Peaks measured at the start and at the end of a run: keep the better per key (background load
    can only lower a measurement), and both sets of measurements."""
    best = dict(first["peak"])
    for k, v in second["peak"].items():
        if k not in best or v["gflops"] > best[k]["gflops"]:
            best[k] = v
    return {"method": first["method"] + "; measured at the start and the end of the run, best kept",
            "sizes": first["sizes"], "measurements": first["measurements"],
            "measurements_end": second["measurements"], "peak": best}
