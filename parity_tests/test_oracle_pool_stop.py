"""`grade`'s pool stop ends the worker processes it is given, found through the pool's
multiprocessing context (RecordingContext), not through ProcessPoolExecutor's private
`_processes`: a pool without that attribute (another Python's) is stopped all the same."""
from __future__ import annotations

import multiprocessing as mp
import time
from concurrent.futures import ProcessPoolExecutor

from parity_tests.oracle.grading.pool_stop import RecordingContext, stop_workers


def test_the_workers_of_a_pool_without_its_private_process_table_are_stopped():
    context = RecordingContext(mp.get_context("spawn"))
    pool = ProcessPoolExecutor(max_workers=2, mp_context=context)
    for _ in range(2):
        pool.submit(time.sleep, 120)
    deadline = time.monotonic() + 60
    while not (context.processes and all(p.is_alive() for p in context.processes)) \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    workers = list(context.processes)
    assert len(workers) == 2 and all(p.is_alive() for p in workers)
    pool._processes = None                      # what the stop must not depend on
    try:
        stop_workers(pool, context.processes)
        for p in workers:
            p.join(10)
        assert [p.is_alive() for p in workers] == [False, False]
    finally:
        for p in workers:
            if p.is_alive():
                p.kill()


def test_the_recording_context_is_the_wrapped_context_otherwise():
    spawn = mp.get_context("spawn")
    context = RecordingContext(spawn)
    assert context.get_start_method() == "spawn" and context.processes == []
