"""Stopping `grade`'s worker processes when the grader is stopped (Ctrl-C, SIGTERM).

Leaving a `with ProcessPoolExecutor(...)` block by an exception waits for the grades in flight,
and a worker does not stop for an interrupt (its search reads one as the candidate's failure and
goes on), so a grader sent SIGINT alone (`kill -INT`, `timeout -s INT`) waited on its workers for
good, and one killed afterwards left them running. `stop_workers` cancels the work not started,
asks each worker to stop (SIGINT), and after a short grace kills what is left, with the process
group of each confined child the worker had started (each runs in a session of its own).

ProcessPoolExecutor has no public list of its processes (`_processes` is private and may change),
so the pool is given a `RecordingContext`: the spawn context, passed as its documented `mp_context`,
which keeps every Process the pool makes through it.
"""
from __future__ import annotations

import contextlib
import os
import signal
import time

GRACE_S = 2.0


def _children(pid: int) -> list[int]:
    """The direct children of `pid` (Linux /proc; none elsewhere)."""
    found: list[int] = []
    with contextlib.suppress(OSError, ValueError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found += [int(c) for c in f.read().split()]
    return found


class RecordingContext:
    """A multiprocessing context (`multiprocessing.get_context(...)`) that records the processes
    made through it; everything else is the wrapped context's."""

    def __init__(self, context) -> None:
        self._context = context
        self.processes: list = []

    def __getattr__(self, name: str):
        return getattr(self._context, name)

    def Process(self, *args, **kwargs):  # noqa: N802 - the context's own method name
        p = self._context.Process(*args, **kwargs)
        self.processes.append(p)
        return p


def stop_workers(pool, processes: list) -> None:
    """End `pool`'s worker processes (`processes`: its RecordingContext's) now; never raises. A
    second Ctrl-C while it runs (an impatient user; `timeout -s INT` signals its child and then
    the child's whole group) is ignored until it is done."""
    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except (ValueError, OSError):             # not the main thread
        previous = None
    try:
        _stop(pool, list(processes))
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _stop(pool, procs: list) -> None:
    with contextlib.suppress(Exception):      # no new work for anyone
        pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        with contextlib.suppress(Exception):
            if p.is_alive():
                os.kill(p.pid, signal.SIGINT)
    end = time.monotonic() + GRACE_S
    for p in procs:
        with contextlib.suppress(Exception):
            p.join(max(0.0, end - time.monotonic()))
    for p in procs:
        with contextlib.suppress(Exception):
            if p.is_alive():
                kids = _children(p.pid)
                p.kill()
                p.join(1.0)
                for k in kids:                # a confined child leads its own process group
                    with contextlib.suppress(OSError):
                        os.killpg(k, signal.SIGKILL)


def the_stop(exc: BaseException) -> BaseException:
    """The stop request behind `exc`: a Ctrl-C that lands while `as_completed` waits on a lock can
    surface as the lock's own RuntimeError ("release unlocked lock") raised while the
    KeyboardInterrupt was being handled; the grader then answers the interrupt (one line, exit
    130 / 143), never with that error's traceback. Any other exception is returned as it is."""
    seen, e = set(), exc
    while e is not None and id(e) not in seen:
        if isinstance(e, KeyboardInterrupt):
            return e
        seen.add(id(e))
        e = e.__context__
    return exc
