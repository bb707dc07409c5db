"""benchmarks/isolation.py: other threads' CPU time is seen, and `settle` waits until they stop.

The waiting logic runs on scripted CPU readings (no clock involved); the reading itself is checked
against a real thread that burns a known amount of CPU time."""
import hashlib
import threading
import time

import pytest

import benchmarks.isolation as iso


def test_a_spinning_thread_is_counted_and_the_caller_is_not():
    if iso.other_threads_cpu_ns() is None:
        pytest.skip("/proc/self/task/*/schedstat not readable here")
    done, release = threading.Event(), threading.Event()

    buf = bytes(4 << 20)

    def spin():
        t0 = time.thread_time()
        while time.thread_time() - t0 < 0.2:      # 0.2 s of this thread's own CPU time, mostly
            hashlib.sha256(buf)                   # without the GIL (hashlib releases it)
        done.set()
        release.wait()                            # alive (and counted) but idle

    before = iso.other_threads_cpu_ns()
    th = threading.Thread(target=spin)
    th.start()
    seen = 0
    while not done.is_set():                      # spinning: runnable, whether on a core or not
        seen = max(seen, iso.other_threads()[1])
        time.sleep(0.005)
    assert seen >= 1
    time.sleep(0.05)
    assert iso.other_threads()[1] == 0            # waiting on an Event: asleep
    after = iso.other_threads_cpu_ns()
    t0 = time.thread_time()
    while time.thread_time() - t0 < 0.2:          # the caller's own CPU time is left out
        pass
    again = iso.other_threads_cpu_ns()
    release.set()
    th.join()
    assert after - before >= 0.19e9, (before, after)
    assert again - after < 0.1e9, (after, again)


def _scripted(monkeypatch, readings):
    it = iter(readings)
    monkeypatch.setattr(iso, "other_threads", lambda: next(it))
    slept = []
    monkeypatch.setattr(iso.time, "sleep", lambda s: slept.append(s))
    return slept


def test_settle_waits_until_a_window_is_quiet(monkeypatch):
    w = iso.WINDOW * 1e9
    busy, quiet = w, 0.01 * w                    # a whole core, then 1 % of one
    slept = _scripted(monkeypatch, [(0, 1), (busy, 1), (2 * busy, 1), (2 * busy + quiet, 0),
                                    (99 * w, 1)])
    waited, ok = iso.settle()
    assert ok and slept == [iso.WINDOW] * 3


def test_a_runnable_thread_without_cpu_time_is_not_quiet(monkeypatch):
    """On a loaded machine a spinning thread can wait a whole window for a core: no CPU time used,
    still runnable. settle must keep waiting until it has parked."""
    slept = _scripted(monkeypatch, [(0, 1), (0, 1), (0, 1), (0, 0), (0, 1)])
    waited, ok = iso.settle()
    assert ok and slept == [iso.WINDOW] * 3


def test_settle_gives_up_after_max_wait_and_says_so(monkeypatch):
    clock = iter(range(1000))
    monkeypatch.setattr(iso.time, "perf_counter", lambda: float(next(clock)))
    _scripted(monkeypatch, [(i * 10**9, 1) for i in range(1000)])   # never quiet
    waited, ok = iso.settle(max_wait=5.0)
    assert not ok and waited > 5.0


def test_settle_stats():
    s = iso.SettleStats()
    s.add(0.1, True)
    s.add(0.3, False)
    assert s.as_dict() == {"waits": 2, "mean_s": pytest.approx(0.2), "longest_s": 0.3, "gave_up": 1}
