"""npformer.fast.rows: the ranges cover every row once, and run_rows runs each row once, on threads."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from npformer.fast import rows
from npformer.fast.rows import row_ranges, run_rows


@pytest.mark.parametrize("n, parts", [(1, 1), (1, 4), (3, 4), (7, 2), (10, 3), (64, 5), (5, 5)])
def test_row_ranges_cover_the_rows_once_in_order_with_sizes_one_apart(n, parts):
    r = row_ranges(n, parts)
    assert r[0][0] == 0 and r[-1][1] == n
    assert all(a[1] == b[0] for a, b in zip(r, r[1:]))             # contiguous, in order
    sizes = [hi - lo for lo, hi in r]
    assert min(sizes) >= 1 and max(sizes) - min(sizes) <= 1
    assert sizes == sorted(sizes, reverse=True)                    # larger first
    assert len(r) == min(n, parts)


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("blocked", [False, True])
@pytest.mark.parametrize("n", [1, 2, 7, 100])
def test_run_rows_runs_every_row_exactly_once(monkeypatch, threads, blocked, n):
    monkeypatch.setattr(rows, "MIN_ELEMENTS", 1)
    monkeypatch.setattr(rows, "MIN_ELEMENTS_BLOCKED", 1)
    monkeypatch.setattr(rows, "BLOCK", 3)
    seen = np.zeros(n, dtype=int)
    names = set()
    lock = threading.Lock()

    def job(lo, hi):
        with lock:
            seen[lo:hi] += 1
            names.add(threading.current_thread().name)
    run_rows(job, n, n * 5, threads, blocked=blocked)
    np.testing.assert_array_equal(seen, np.ones(n, dtype=int))
    # range 0 runs in the calling thread, the others on the pool (which may reuse one thread)
    assert threading.current_thread().name in names
    assert len(names) == (1 if min(threads, n) == 1 else 2) or len(names) == min(threads, n)


@pytest.mark.parametrize("blocked", [False, True])
def test_run_rows_keeps_small_jobs_in_the_calling_thread(blocked):
    least = rows.MIN_ELEMENTS_BLOCKED if blocked else rows.MIN_ELEMENTS
    for elements, parts in ((least - 1, 1), (2 * least - 1, 1), (2 * least, 2), (9 * least, 4)):
        names = []
        run_rows(lambda lo, hi: names.append(threading.current_thread().name), 8, elements, 4,
                 blocked=blocked)
        assert len(set(names)) <= parts and threading.current_thread().name in names
        if parts == 1:
            assert set(names) == {threading.current_thread().name}


def test_run_rows_raises_a_worker_error_after_every_range_is_done(monkeypatch):
    monkeypatch.setattr(rows, "MIN_ELEMENTS", 1)
    done = []

    def job(lo, hi):
        if lo > 0:
            raise ValueError(f"range {lo}")
        done.append(lo)
    with pytest.raises(ValueError, match="range"):
        run_rows(job, 6, 600, 3)
    assert done == [0]
