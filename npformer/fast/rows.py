"""Run one elementwise job on slices of an array, the slices spread over worker threads.

NumPy releases the GIL inside a ufunc or a reduction on a large enough array, so K threads each
working on their own rows of an array keep K cores busy. The fast layers (npformer.fast.activations,
layernorm, softmax, loss, dropout) write their job as `job(lo, hi)`, the work on rows lo:hi, and
call `run_rows(job, rows, elements, threads)`: the rows are cut into `threads` contiguous ranges,
range 0 runs in the calling thread and the others in a shared pool, and the call returns when
every range is done (the first error, by range order, is raised).

Each element gets the same operations in the same order whatever the cut, so a job whose results
per row do not depend on other rows gives the same bits on any number of threads. Small arrays run
in one piece in the calling thread: below MIN_ELEMENTS elements per thread, handing work to a pool
thread costs more than it saves.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor, wait
from typing import Callable

__all__ = ["MIN_ELEMENTS", "row_ranges", "run_rows", "shared_pool"]

# Elements per thread from which a job is split: about 50 microseconds of an elementwise pass, the
# order of what handing a job to a pool thread and waiting for it costs in Python.
MIN_ELEMENTS = 32768

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


def run_rows(job: Callable[[int, int], object], rows: int, elements: int, threads: int) -> None:
    """job(lo, hi) over `rows` rows cut into ranges, on up to `threads` threads.

    elements  the size of the work (elements touched), which decides how many threads pay:
              at least MIN_ELEMENTS per thread, else fewer (one: the calling thread alone)
    """
    parts = min(threads, rows, max(1, elements // MIN_ELEMENTS))
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
