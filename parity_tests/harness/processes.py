"""A process's children and grandchildren, read from /proc (Linux), for tests that stop a grader
and check what it leaves running."""
from __future__ import annotations

import os


def children(pid: int) -> list[int]:
    """The child processes of `pid` (every thread's), or [] where /proc cannot tell."""
    kids: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                kids += [int(c) for c in f.read().split()]
    except OSError:
        pass
    return kids


def grandchildren(pid: int) -> list[int]:
    """The children of `pid`'s children: for `grade`, the confined checks its workers run."""
    return [g for c in children(pid) for g in children(c)]
