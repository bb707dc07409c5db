"""In-process A/B rounds, shared by the scripts that time variants of one job against each other
(`benchmarks.elementwise`, `benchmarks.gemm_forms`): their arguments, the interleaved rounds, the
paired ratio, and the results file.

    interleave(fns, repeats, max_time)   rounds of one sample of each callable, order reversed every
                                         other round, the settle wait before every sample
    paired_ratio(res, num, den, key)     median over rounds of num's sample / den's sample
    add_ab_arguments(p, ...)             --configs --threads --repeats --out --overwrite
    parsed_ab_arguments(p, args)         (config names, thread counts), each checked, and --out
                                         refused before anything is measured when it would replace
                                         an earlier run's results
    write_results(out, payload)          results.json in --out, written whole or not at all

The main benchmark (`python -m benchmarks`) times whole backends with `benchmarks.timing` instead.
"""
from __future__ import annotations

import argparse
import math
import os
import time
from typing import Callable

import numpy as np

from benchmarks.configs import CONFIGS
from benchmarks.files import write_json
from benchmarks.isolation import settle

RESULTS = "results.json"


def interleave(fns: dict[str, Callable], repeats: int, max_time: float) -> dict[str, dict]:
    """Rounds of one sample of each callable (order reversed every other round), after two untimed
    calls each and the settle wait before every sample. Per name: median wall ms, median CPU ms
    (this process, all its threads: what the work cost, which other processes' load does not
    inflate) and the per-round samples."""
    for fn in fns.values():
        fn()
        fn()
    est = max(1e-4, min(_time_once(fn) for fn in fns.values()))
    number = max(1, int(0.02 / est))                       # about 20 ms per sample at least
    wall: dict[str, list[float]] = {n: [] for n in fns}
    cpu: dict[str, list[float]] = {n: [] for n in fns}
    t_start = time.perf_counter()
    for r in range(repeats):
        for n in (list(fns) if r % 2 == 0 else list(fns)[::-1]):
            settle()
            c0, t0 = time.process_time(), time.perf_counter()
            for _ in range(number):
                fns[n]()
            wall[n].append((time.perf_counter() - t0) / number * 1e3)
            cpu[n].append((time.process_time() - c0) / number * 1e3)
        if time.perf_counter() - t_start > max_time:
            break
    return {n: {"wall_ms": float(np.median(wall[n])), "cpu_ms": float(np.median(cpu[n])),
                "wall_samples": wall[n], "cpu_samples": cpu[n]} for n in fns}


def _time_once(fn: Callable) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def paired_ratio(res: dict, num: str, den: str, key: str) -> float:
    """The median over rounds of res[num][key][r] / res[den][key][r] (NaN without a pair)."""
    pairs = [a / b for a, b in zip(res[num][key], res[den][key]) if b > 0]
    return float(np.median(pairs)) if pairs else math.nan


def add_ab_arguments(p: argparse.ArgumentParser, *, configs: str, repeats: int,
                     threads_help: str = "thread counts") -> None:
    """The options every A/B script takes, with its own defaults."""
    p.add_argument("--configs", default=configs, help="comma-separated, from " + ",".join(CONFIGS)
                   + " (default: %(default)s)")
    p.add_argument("--threads", default="1,2", help=threads_help + ", comma-separated (default: "
                                                   "%(default)s)")
    p.add_argument("--repeats", type=int, default=repeats,
                   help="rounds per table (default: %(default)s)")
    p.add_argument("--out", help=f"write {RESULTS} into this directory")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the file(s) an earlier run left in --out")


def parsed_ab_arguments(p: argparse.ArgumentParser, args) -> tuple[list[str], list[int]]:
    """(config names, thread counts) from args; p.error naming the option on a bad value, and on an
    --out that would replace an earlier run's results (before anything is measured)."""
    names = [c for c in args.configs.split(",") if c]
    unknown = [c for c in names if c not in CONFIGS]
    if unknown:
        p.error(f"--configs: unknown {unknown}; expected names from {list(CONFIGS)}")
    if not names:
        p.error(f"--configs: expected names from {list(CONFIGS)}, got {args.configs!r}")
    try:
        thread_counts = [int(t) for t in args.threads.split(",") if t]
    except ValueError:
        thread_counts = []
    if not thread_counts or min(thread_counts) < 1:
        p.error(f"--threads: expected comma-separated positive ints, got {args.threads!r}")
    if args.repeats < 1:
        p.error(f"--repeats: expected a positive int, got {args.repeats}")
    if args.out:
        from npformer.io.files import check_output_dir
        try:
            check_output_dir(args.out, "--out", writes=[RESULTS], overwrite=args.overwrite)
        except ValueError as e:
            p.error(str(e))
    return names, thread_counts


def write_results(out: str, payload: dict) -> str:
    """payload as out/results.json, through a temporary file renamed into place; returns the path."""
    return str(write_json(os.path.join(out, RESULTS), payload))
