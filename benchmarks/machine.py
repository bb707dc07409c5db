"""The machine a benchmark ran on, and the thread counts it ran with (fixed, then printed).

Thread counts are fixed twice: through the environment (OMP/MKL/OPENBLAS_NUM_THREADS, read by the
libraries when they load, so `python -m benchmarks` sets them before importing NumPy or torch) and at
run time (`torch.set_num_threads`, and OpenBLAS's own `*_set_num_threads` through ctypes, which also
covers a NumPy that was imported before us, e.g. under pytest). What the libraries then report is
recorded, not what we asked for.
"""
from __future__ import annotations

import ctypes
import os
import platform
import sys
from typing import Any

THREAD_ENV_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                   "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
_CHOSEN_ENV = "BENCHMARKS_THREADS"


def available_cores() -> int:
    """CPU cores this process may run on (affinity mask), which is what a thread count should match."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _threads_in_argv(argv: list[str]) -> int | None:
    for i, a in enumerate(argv):
        if a == "--threads" and i + 1 < len(argv):
            return int(argv[i + 1])
        if a.startswith("--threads="):
            return int(a.split("=", 1)[1])
    return None


def npformer_train_threads() -> int:
    """The thread count `npformer train` uses when not told (its `--threads` default): the
    benchmark's default too, so its figures describe the training a user runs."""
    from npformer.cli.defaults import DEFAULTS
    return int(DEFAULTS["threads"])


def pin_threads_from_argv(argv: list[str]) -> int:
    """Set the thread environment variables from `--threads N` (default: `npformer train`'s).

    Must run before NumPy/torch are imported to take effect through the environment; `apply_threads`
    fixes the run-time side afterwards either way. Without `--threads`, reading npformer's default
    imports NumPy, so the variables are set to 1 first (never every core of a shared machine) and to
    the default afterwards; `apply_threads` then raises OpenBLAS and torch to it at run time.
    """
    try:
        n = _threads_in_argv(argv)
    except ValueError:
        n = None  # argparse reports the bad value later with a proper message
    if n is None or n < 1:
        for var in THREAD_ENV_VARS:
            os.environ[var] = "1"
        n = npformer_train_threads()
    for var in THREAD_ENV_VARS:
        os.environ[var] = str(n)
    os.environ[_CHOSEN_ENV] = str(n)
    return n


# -- BLAS threads through ctypes (a tiny threadpoolctl) -------------------------------------------
def _loaded_libraries() -> list[str]:
    paths: list[str] = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 6 and ".so" in parts[-1] and parts[-1] not in paths:
                    paths.append(parts[-1])
    except OSError:  # pragma: no cover - not Linux
        pass
    return paths


def openblas_handles() -> list[tuple[str, Any, str]]:
    """(path, CDLL, symbol prefix) for each OpenBLAS loaded in this process (NumPy's, maybe others)."""
    out = []
    for path in _loaded_libraries():
        if "openblas" not in os.path.basename(path).lower():
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix, suffix in (("scipy_openblas", "64_"), ("openblas", "64_"), ("openblas", "")):
            if hasattr(lib, f"{prefix}_get_num_threads{suffix}"):
                out.append((path, lib, f"{prefix}|{suffix}"))
                break
    return out


def openblas_call(lib, tag: str, what: str, *args):
    """Call OpenBLAS's `what` (get_num_threads, set_num_threads, get_config) in a library from
    openblas_handles, whose symbols carry the tag's prefix and suffix."""
    prefix, suffix = tag.split("|")
    fn = getattr(lib, f"{prefix}_{what}{suffix}")
    if what == "get_config":
        fn.restype = ctypes.c_char_p
        return fn().decode(errors="replace")
    return fn(*args)


def blas_info() -> list[dict[str, Any]]:
    """What each loaded OpenBLAS reports: library, threads, config string (NumPy's BLAS on this image)."""
    info = []
    for path, lib, tag in openblas_handles():
        entry: dict[str, Any] = {"library": os.path.basename(path)}
        try:
            entry["threads"] = int(openblas_call(lib, tag, "get_num_threads"))
            entry["config"] = openblas_call(lib, tag, "get_config")
        except (AttributeError, OSError):  # pragma: no cover - unusual builds
            pass
        info.append(entry)
    return info


def apply_threads(n: int) -> dict[str, Any]:
    """Fix the thread counts at run time (torch intra-op threads, OpenBLAS) and return what they report.

    The environment is left alone here (`pin_threads_from_argv` sets it for `python -m benchmarks`),
    so an in-process call (tests) does not leak thread settings into later subprocesses.
    """
    for path, lib, tag in openblas_handles():
        try:
            openblas_call(lib, tag, "set_num_threads", ctypes.c_int(n))
        except (AttributeError, OSError):  # pragma: no cover
            pass
    try:
        import torch
        torch.set_num_threads(n)
    except ImportError:
        pass
    return thread_report(n)


def thread_report(requested: int) -> dict[str, Any]:
    rep: dict[str, Any] = {"requested": requested, "available_cores": available_cores(),
                           "env": {v: os.environ.get(v) for v in THREAD_ENV_VARS},
                           "openblas": blas_info()}
    if sys.modules.get("torch") is not None:      # None: torch blocked or missing
        import torch
        rep["torch_intra_op"] = torch.get_num_threads()
        rep["torch_inter_op"] = torch.get_num_interop_threads()
    return rep


def chosen_threads() -> int:
    """Thread count chosen by `pin_threads_from_argv` (or `npformer train`'s default when it did not
    run, e.g. `benchmarks.main()` called in-process)."""
    try:
        return int(os.environ[_CHOSEN_ENV])
    except (KeyError, ValueError):
        return npformer_train_threads()


# -- hardware and versions ------------------------------------------------------------------------
def _cpuinfo() -> dict[str, Any]:
    model, flags = platform.processor() or "unknown", []
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and model in ("unknown", "x86_64", ""):
                    model = line.split(":", 1)[1].strip()
                elif line.startswith("flags") and not flags:
                    flags = line.split(":", 1)[1].split()
    except OSError:  # pragma: no cover
        pass
    wanted = ("avx", "avx2", "fma", "avx512f", "avx512_bf16", "avx512_fp16", "amx_bf16", "amx_tile")
    return {"model": model, "simd": [f for f in wanted if f in flags]}


def _memory_gib() -> float | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal"):
                    return round(int(line.split()[1]) / 2**20, 1)
    except OSError:  # pragma: no cover
        pass
    return None


def describe_machine() -> dict[str, Any]:
    """Hardware and software versions, as recorded in the JSON and printed above the table."""
    import numpy as np

    cpu = _cpuinfo()
    d: dict[str, Any] = {
        "cpu": cpu["model"], "cpu_simd": cpu["simd"], "logical_cpus": os.cpu_count(),
        "available_cores": available_cores(), "memory_gib": _memory_gib(),
        "os": platform.platform(), "python": platform.python_version(), "numpy": np.__version__,
    }
    try:
        cfg = np.show_config(mode="dicts")
        blas = cfg.get("Build Dependencies", {}).get("blas", {})
        d["numpy_blas"] = f"{blas.get('name', '?')} {blas.get('version', '')}".strip()
    except Exception:  # noqa: BLE001 - older NumPy without mode="dicts"
        d["numpy_blas"] = "unknown"
    try:
        import torch
        d["torch"] = torch.__version__
        d["torch_parallel"] = torch.__config__.parallel_info().splitlines()[-1].strip()
        d["mkldnn"] = bool(torch.backends.mkldnn.is_available())
        d["cuda_available"] = bool(torch.cuda.is_available())
        if torch.cuda.is_available():
            p = torch.cuda.get_device_properties(0)
            d["gpu"] = p.name
            d["gpu_memory_gib"] = round(p.total_memory / 2**30, 1)
            d["gpu_capability"] = f"{p.major}.{p.minor}"
            d["cuda"] = torch.version.cuda
    except ImportError:
        d["torch"] = None
        d["cuda_available"] = False
    try:
        import matplotlib
        d["matplotlib"] = matplotlib.__version__
    except ImportError:
        d["matplotlib"] = None
    d["source"] = source_revision()
    return d


def source_revision() -> str | None:
    """The project's git commit ("+dirty" when the working tree differs), None outside a checkout."""
    import subprocess
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        rev = subprocess.run(["git", "-C", root, "rev-parse", "--short=12", "HEAD"], capture_output=True,
                             text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return rev + ("+dirty" if dirty else "") if rev else None
