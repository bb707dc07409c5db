"""A stop request Python had to drop is delivered again.

The oracle's CLI turns Ctrl-C and SIGTERM into exceptions (KeyboardInterrupt, Terminated) and
answers them with one line. A signal that lands while Python runs a callback it cannot raise from
(a fork handler of `logging` as the worker pool forks, a finaliser) has its exception printed as
"Exception ignored in ..." with a traceback, and dropped. While `interrupts_kept()` is active such a
dropped stop is raised again a moment later, once the callback has returned: a short-lived thread
marks the same signal pending for the main thread (`_thread.interrupt_main`; marked from inside the
callback, the handler would run, and be dropped, there again), and nothing is printed for it.
"""
from __future__ import annotations

import _thread
import contextlib
import signal
import sys
import threading


@contextlib.contextmanager
def interrupts_kept():
    previous = sys.unraisablehook

    def hook(unraisable) -> None:
        exc = unraisable.exc_value
        if isinstance(exc, KeyboardInterrupt):
            terminated = type(exc).__name__ == "Terminated"
            again = threading.Timer(0.01, _thread.interrupt_main,
                                    (signal.SIGTERM if terminated else signal.SIGINT,))
            again.daemon = True
            again.start()
            return
        previous(unraisable)

    sys.unraisablehook = hook
    try:
        yield
    finally:
        sys.unraisablehook = previous
