"""Third-party output kept out of the tables.

Libraries print while they are measured: torch's profiler (used for peak memory) writes lines such as
`USDT:... profiler_start` straight to file descriptor 2, compilers and warnings write to 1 or 2. With
`2>&1` (or a terminal) those lines land between, or inside, the benchmark's tables. `quarantine(path)`
points file descriptors 1 and 2 at a log file for the duration of the measurements and hands back a
`log` function that writes the benchmark's own progress lines to the real stderr; afterwards 1 and 2
are restored, so stdout carries only what the benchmark prints itself.
"""
from __future__ import annotations

import contextlib
import os
import sys
from typing import Callable, Iterator


@contextlib.contextmanager
def quarantine(path: str, quiet: bool = False) -> Iterator[Callable[[str], None]]:
    """Within the block, fds 1 and 2 write to `path`; the yielded `log(msg)` writes to the real
    stderr (nothing when `quiet`)."""
    for s in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            s.flush()
    saved_out, saved_err = os.dup(1), os.dup(2)
    real_err = os.fdopen(os.dup(saved_err), "w", buffering=1)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)

    def log(msg: str) -> None:
        if not quiet:
            real_err.write(msg + "\n")

    try:
        yield log
    finally:
        for s in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                s.flush()
        os.dup2(saved_out, 1)
        os.dup2(saved_err, 2)
        os.close(saved_out)
        os.close(saved_err)
        real_err.close()


def count_lines(path: str) -> int:
    try:
        with open(path, errors="replace") as f:
            return sum(1 for line in f if line.strip())
    except OSError:
        return 0

