"""What the submission sees of its own process: the command line of a bare interpreter.

The worker starts as `python -I -B -c BOOT ROOT` (parent.py): its boot line names the oracle's
modules and the project root, in `sys.argv`, `sys.orig_argv` and `/proc/self/cmdline` (and in its
namespace's PID 1, a fork of it). Code right only when it sees them
(`oracle_hostile/detects_sandbox_process.py`) matched. Before the fork, so before Landlock (which
refuses the write into /proc/self/mem) and before a line of the submission runs, the worker now
shows `python` everywhere: `sys.argv == [""]` and `/proc/self/cmdline == b"python\\0"`, as a
`python < file.py` or an interpreter embedding the code would. This raises the bar only: a
submission can still tell a sandbox by other means (docs/ORACLE.md, "Red-team round 9").
"""
from __future__ import annotations

import os
import sys


def show_plain() -> None:
    """Make `python` the process's command line, in Python (`sys.argv`, `sys.orig_argv`) and for
    the kernel: the original argument area is rewritten in place, as setproctitle does (its last
    byte not NUL, so the kernel reads it up to the first NUL: exactly b"python\\0"); left as it was
    where /proc/self/mem cannot be written."""
    name = os.path.basename(sys.executable) or "python"
    sys.argv, sys.orig_argv = [""], [name]
    data = os.fsencode(name) + b"\0"
    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rpartition(b")")[2].split()
        start, end = int(fields[45]), int(fields[46])     # arg_start, arg_end (fields 48, 49)
        if 0 < start < end and len(data) < end - start:
            with open("/proc/self/mem", "r+b", buffering=0) as mem:
                mem.seek(start)
                mem.write(data.ljust(end - start - 1, b"\0") + b" ")
    except (OSError, ValueError, IndexError):
        pass
