"""Keeping one backend's helper threads out of the next backend's sample.

After a NumPy call, OpenBLAS's worker threads keep spinning on a core for a while (2**28 CPU cycles by
default, about 0.1 s) waiting for more work; torch's OpenMP threads spin briefly too. In interleaved
rounds that spin lands in the next backend's sample: on 2 cores a torch sample that follows a NumPy
sample loses one of its two cores for its first ~0.1 s, so its samples turn bimodal and the ratios
depend on which backend happens to come after NumPy.

`settle()` waits, before every sample, until no other thread of this process is runnable or has used
the CPU during a short window: it reads each thread's time on the CPU from
/proc/self/task/*/schedstat (nanoseconds) and its state from .../stat (Linux), so it sees spinning
BLAS/OpenMP threads whatever library they belong to, without threadpoolctl and without changing any
library setting. Each backend then runs its sample as it runs alone (its own
threads may spin during its own sample, as they do in a training loop); only the hand-over between
backends is made quiet. What each wait took is recorded, so the spinning is measured, not assumed.
"""
from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass

WINDOW = 0.01        # seconds per check
QUIET = 0.05         # other threads' CPU time per window, as a fraction of one core, that counts as idle
MAX_WAIT = 1.0       # give up (and record it) after this long


def other_threads() -> tuple[int, int] | None:
    """(nanoseconds on the CPU summed over every thread of this process but the calling one, how
    many of them are runnable now); None where /proc/self/task cannot be read (not Linux, or
    schedstats off). A runnable thread (state R) is running or waiting for a core: a spinning BLAS
    worker stays runnable even while other processes keep it off the CPU, a parked one sleeps."""
    me = threading.get_native_id()
    total = runnable = 0
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return None
    seen = False
    for tid in tids:
        if int(tid) == me:
            continue
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                ns = int(f.read().split()[0])
            with open(f"/proc/self/task/{tid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]     # the field after "(comm)"
        except (OSError, ValueError, IndexError):
            continue                      # the thread ended between listdir and open
        total += ns
        runnable += state == "R"
        seen = True
    if not seen and len(tids) > 1:
        return None
    return total, runnable


def other_threads_cpu_ns() -> int | None:
    """Nanoseconds on the CPU, summed over every thread of this process but the calling one."""
    got = other_threads()
    return None if got is None else got[0]


@dataclass
class SettleStats:
    """How long `settle` waited before each sample of one backend, and how often it gave up."""

    waits: int = 0
    seconds: float = 0.0
    longest: float = 0.0
    gave_up: int = 0

    def add(self, waited: float, quiet: bool) -> None:
        self.waits += 1
        self.seconds += waited
        self.longest = max(self.longest, waited)
        self.gave_up += 0 if quiet else 1

    def as_dict(self) -> dict:
        return {"waits": self.waits, "mean_s": self.seconds / self.waits if self.waits else 0.0,
                "longest_s": self.longest, "gave_up": self.gave_up}


def settle(window: float = WINDOW, quiet: float = QUIET, max_wait: float = MAX_WAIT
           ) -> tuple[float, bool]:
    """Sleep until no other thread of this process is runnable and together they used at most
    `quiet` of a core over one `window`; return (seconds waited, whether that happened before
    `max_wait`). Both tests, because on a loaded machine a spinning thread can sit a whole window
    without a core (no CPU time, but still runnable)."""
    t0 = time.perf_counter()
    prev = other_threads()
    if prev is None:                       # cannot see the threads: a fixed pause past OpenBLAS's spin
        time.sleep(0.2)
        return time.perf_counter() - t0, True
    while True:
        time.sleep(window)
        cur = other_threads()
        if cur is None:
            return time.perf_counter() - t0, False
        if cur[0] - prev[0] <= quiet * window * 1e9 and cur[1] == 0:
            return time.perf_counter() - t0, True
        if time.perf_counter() - t0 > max_wait:
            return time.perf_counter() - t0, False
        prev = cur
