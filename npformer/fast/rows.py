"""Run one elementwise job on slices of an array, the slices spread over worker threads.

NumPy releases the GIL inside a ufunc or a reduction on a large enough array, so K threads each
working on their own rows of an array keep K cores busy. The fast layers (npformer.fast.activations,
layernorm, softmax, loss, dropout) write their job as `job(lo, hi)`, the work on rows lo:hi, and
call `run_rows(job, rows, elements, threads)`: the rows are cut into `threads` contiguous ranges,
range 0 runs in the calling thread and the others in a shared pool, and the call returns when
every range is done (the first error, by range order, is raised).

Each element gets the same operations in the same order whatever the cut, so a job whose results
per row do not depend on other rows gives the same bits on any number of threads. Small arrays run
in one piece in the calling thread: below MIN_ELEMENTS (or MIN_ELEMENTS_BLOCKED) elements per
thread, handing work to a pool thread costs more than it saves.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor, wait
from typing import Callable

__all__ = ["BLOCK", "MIN_ELEMENTS", "MIN_ELEMENTS_BLOCKED", "row_ranges", "run_rows", "shared_pool",
           "split_parts"]

# Elements per thread from which a job is split (a `blocked` job, many passes per element such as
# GELU or the loss, from fewer): below them, handing work to the pool and passing the GIL between
# the threads at every NumPy call costs about what the second thread saves. How they were measured,
# loaded and idle: docs/PERFORMANCE.md ("Elementwise variants"; "The training step as npformer
# train runs it") and docs/benchmarks/training-as-run/.
MIN_ELEMENTS = 1048576
MIN_ELEMENTS_BLOCKED = 32768

# Elements per block of a `blocked` job: each thread runs its range in blocks of whole rows of about
# this many elements, so the arrays of a multi-pass job (a few of them, 128 KB each in float32) stay
# in the core's L2 cache from one pass to the next instead of streaming through main memory.
# Measured on GELU-tanh forward + backward at 128 x 3072 and 512 x 2048 float32, one thread: whole
# ranges 0.94-0.97x the plain code's time, blocks of 8192 elements 0.50-0.59x, 32768 0.33-0.44x,
# 131072 0.39-0.41x. A job of few passes over arrays that fit the L2 cache whole gains nothing and
# pays Python's cost per call once per block: LayerNorm at 128 x 768 took 1.20x the plain code's CPU
# time blocked, 1.03x whole (softmax of (2, 12, 64, 64) scores 1.46x and 1.06x): they run whole.
BLOCK = 32768

_POOLS: dict[int, ThreadPoolExecutor] = {}


def shared_pool(workers: int) -> ThreadPoolExecutor:
    """One shared pool of `workers` threads per count, made on first use (never shut down: its
    threads are idle between jobs and end with the process)."""
    if workers not in _POOLS:
        _POOLS[workers] = ThreadPoolExecutor(workers, thread_name_prefix="npformer-rows")
    return _POOLS[workers]


def row_ranges(rows: int, parts: int) -> list[tuple[int, int]]:
    """`rows` cut into at most `parts` contiguous ranges [(lo, hi)], sizes differing by at most one,
    larger first; no empty range (3 rows in 4 parts give 3 ranges)."""
    parts = max(1, min(parts, rows))
    base, extra = divmod(rows, parts)
    out, lo = [], 0
    for i in range(parts):
        hi = lo + base + (1 if i < extra else 0)
        out.append((lo, hi))
        lo = hi
    return out


def split_parts(rows: int, elements: int, threads: int, *, blocked: bool = False) -> int:
    """How many ranges run_rows cuts a job of `rows` rows and `elements` elements into on `threads`
    threads (1: the calling thread alone), so a caller can take a one-piece path instead."""
    least = MIN_ELEMENTS_BLOCKED if blocked else MIN_ELEMENTS
    return max(1, min(threads, rows, max(1, elements // least)))


def run_rows(job: Callable[[int, int], object], rows: int, elements: int, threads: int, *,
             blocked: bool = False) -> None:
    """job(lo, hi) over `rows` rows cut into ranges, on up to `threads` threads.

    elements  the size of the work (elements touched), which decides how many threads pay:
              at least MIN_ELEMENTS (MIN_ELEMENTS_BLOCKED for a blocked job) per thread, else
              fewer (one: the calling thread alone)
    blocked   each thread calls job on consecutive blocks of its range, of about BLOCK elements
              (at least one row), instead of once on the whole range
    """
    if blocked and rows and elements > BLOCK:
        whole = job
        per = max(1, (rows * BLOCK) // elements)              # rows per block

        def job(lo: int, hi: int) -> None:
            for s in range(lo, hi, per):
                whole(s, min(hi, s + per))
    parts = split_parts(rows, elements, threads, blocked=blocked)
    if parts <= 1:
        job(0, rows)
        return
    ranges = row_ranges(rows, parts)
    pool = shared_pool(parts - 1)
    futures = [pool.submit(job, lo, hi) for lo, hi in ranges[1:]]
    try:
        job(*ranges[0])
    finally:
        wait(futures)                                   # no range left running when this returns
    for f in futures:
        f.result()                                      # re-raise a worker's error
