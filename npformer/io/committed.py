"""The moment an atomic write takes effect, kept whole under Ctrl-C and SIGTERM.

atomic_write renames its temp file over the user's path. An interruption landing just after the
rename (during the folder's fsync, or before the caller has noted the save) must not leave the new
file in place while `npformer train` reports "--save ... was not written". So the rename, the fsync
and the record of the path (`was_written`) run with SIGINT and SIGTERM deferred: one that arrives
meanwhile takes effect right after, by the handler that was in place, and the message asks
`was_written(path)` whether the file is the new one.
"""
from __future__ import annotations

import contextlib
import os
import signal
import threading

_WRITTEN: set[str] = set()
_DEFERRED = (signal.SIGINT, getattr(signal, "SIGTERM", signal.SIGINT))


def record_written(path) -> None:
    _WRITTEN.add(os.path.abspath(os.fspath(path)))


def was_written(path) -> bool:
    """Whether this process has renamed a complete file into `path` (atomic_write)."""
    return path is not None and os.path.abspath(os.fspath(path)) in _WRITTEN


@contextlib.contextmanager
def signals_deferred():
    """SIGINT and SIGTERM received inside the block act when it ends (main thread only: elsewhere a
    handler cannot be set, and the block runs as it is)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    previous: dict[int, object] = {}
    try:
        for s in _DEFERRED:
            previous[s] = signal.signal(s, lambda signum, frame: pending.append(signum))
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        if pending:
            s = pending[0]
            handler = previous.get(s)
            if callable(handler):
                handler(s, None)                    # Python's: KeyboardInterrupt, Terminated, ...
            elif handler == signal.SIG_DFL:
                signal.raise_signal(s)
