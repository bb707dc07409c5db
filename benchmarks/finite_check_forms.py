"""Whether a one-read finiteness test would be faster than npformer's input check.

    python -m benchmarks.finite_check_forms [--rounds 41] [--calls 20]

npformer.guards.validation.check_float rejects NaN/inf with `np.isfinite(x).all()`: a bool array
written and read back. A finite sum proves every entry finite (a NaN or an infinity makes the sum
non-finite; a non-finite sum of finite entries, an overflow, would fall back to the exact check),
so `np.isfinite(x.sum())` reads x once; a BLAS dot with a vector of ones reads it once too. Each form
is timed on the arrays a forward checks (the configurations' embedding outputs and hidden states)
in interleaved rounds, as the main thread's CPU time per call (less sensitive to other processes'
load than wall time), and printed as the median and the median over rounds of form / exact check.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

FORMS = {
    "isfinite(x).all()": lambda x: bool(np.isfinite(x).all()),
    "isfinite(x.sum())": lambda x: bool(np.isfinite(np.add.reduce(x, axis=None))),
    "isfinite(x @ ones)": lambda x, _ones={}: bool(np.isfinite(
        np.dot(x.reshape(-1), _ones.setdefault((x.size, x.dtype), np.ones(x.size, x.dtype))))),
}
SHAPES = [((8, 32, 128), "float32"), ((2, 64, 768), "float32"), ((8, 64, 512), "float32"),
          ((512, 2048), "float32"), ((8, 64, 512), "float64")]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=41)
    ap.add_argument("--calls", type=int, default=20, help="calls per sample")
    a = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    with np.errstate(all="ignore"):
        for shape, dtype in SHAPES:
            x = rng.standard_normal(shape).astype(dtype)
            us = {k: [] for k in FORMS}
            for _ in range(a.rounds):
                for name, f in FORMS.items():
                    t0 = time.thread_time_ns()
                    for _ in range(a.calls):
                        f(x)
                    us[name].append((time.thread_time_ns() - t0) / a.calls / 1e3)
            exact = np.array(us["isfinite(x).all()"])
            cells = [f"{k} {np.median(v):7.1f} us (x{np.median(np.array(v) / exact):.2f})"
                     for k, v in us.items()]
            print(f"{str(shape):14} {dtype:8} " + "  ".join(cells), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
