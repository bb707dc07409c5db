"""A stdout pipe whose reader left (`npformer gradcheck | head`): tell it from other broken pipes,
and end the command as a program killed by SIGPIPE ends, quietly with status 141."""
from __future__ import annotations

import os
import select
import stat
import sys

__all__ = ["SIGPIPE_STATUS", "stdout_reader_gone", "quiet_exit_after_closed_stdout"]

SIGPIPE_STATUS = 141                                      # 128 + SIGPIPE, what a shell reports


def stdout_reader_gone() -> bool:
    """Whether stdout is a pipe nobody reads any more (POLLERR on its write end), so that a broken
    pipe elsewhere (a file, a worker's pipe) is still reported."""
    try:
        fd = sys.stdout.fileno()
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return False
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        return any(ev & select.POLLERR for _, ev in poller.poll(0))
    except (OSError, ValueError, AttributeError):     # no real file behind sys.stdout, no poll()
        return False


def quiet_exit_after_closed_stdout() -> int:
    """SIGPIPE_STATUS, with stdout sent to /dev/null so that the interpreter's final flush cannot
    fail a second time."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return SIGPIPE_STATUS
