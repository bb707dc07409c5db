"""Run candidate code with a time limit, its output captured, and its exceptions turned into values.

A candidate may raise, print, loop forever or call sys.exit; none of that may take the oracle down.
`run_limited(fn, timeout)` runs `fn()` in a daemon thread and waits at most `timeout` seconds:

- a value comes back as `Finished(value)`;
- an exception (SystemExit included) as `Raised(type, message, traceback text)`;
- a call still running at the deadline as `TimedOut(seconds)`. A thread cannot be killed, so the
  oracle asks it to stop (an asynchronous exception, delivered at the next Python bytecode) and
  leaves it behind as a daemon thread; the search stops at once, and the process exits normally.

Printed output of the candidate is captured (never mixed into the oracle's own output) and the last
characters are kept for the report.
"""
from __future__ import annotations

import contextlib
import ctypes
import io
import os
import threading
import traceback
from dataclasses import dataclass
from typing import Any, Callable


@dataclass
class Finished:
    value: Any
    printed: str = ""


@dataclass
class Raised:
    type_name: str
    message: str
    traceback: str
    printed: str = ""
    exception: BaseException | None = None
    in_oracle: bool = False       # raised by the oracle's own code, not by the candidate's
    full_traceback: str = ""

    def describe(self) -> str:
        return f"{self.type_name}: {self.message}" if self.message else self.type_name


@dataclass
class TimedOut:
    seconds: float
    printed: str = ""


_ORACLE_DIRS = (os.path.join("parity_tests", "oracle", ""), "/threading.py", "/contextlib.py")


class _Abandoned(BaseException):
    """Raised inside a timed-out candidate thread to ask it to stop."""


class _TailBuffer(io.StringIO):
    """A text sink that keeps only the last `limit` characters."""

    def __init__(self, limit: int = 4000):
        super().__init__()
        self.limit = limit

    def write(self, s: str) -> int:
        n = super().write(s)
        if self.tell() > 4 * self.limit:
            tail = self.getvalue()[-self.limit:]
            self.seek(0)
            self.truncate()
            super().write(tail)
        return n

    def tail(self) -> str:
        return self.getvalue()[-self.limit:]


def _ask_to_stop(thread: threading.Thread) -> None:
    """Deliver _Abandoned into `thread` (best effort: pure-Python loops stop, C calls finish first)."""
    if thread.ident is None:
        return
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident),
                                               ctypes.py_object(_Abandoned))


def candidate_traceback(exc: BaseException, skip_files: tuple[str, ...] = ()) -> str:
    """The traceback with the oracle's own frames left out (the candidate's frames are what matter)."""
    frames = traceback.extract_tb(exc.__traceback__)
    kept = [f for f in frames if not any(s in f.filename for s in skip_files)]
    lines = traceback.format_list(kept or frames[-3:])
    lines += traceback.format_exception_only(type(exc), exc)
    return "".join(lines)


def run_limited(fn: Callable[[], Any], timeout: float | None) -> Finished | Raised | TimedOut:
    """Run fn() with a wall-clock limit (None: no limit); see the module docstring."""
    box: dict[str, Any] = {}
    sink = _TailBuffer()

    def target() -> None:
        try:
            box["value"] = fn()
        except _Abandoned:
            box["abandoned"] = True
        except BaseException as exc:  # noqa: BLE001 - SystemExit from candidate code included
            box["exc"] = exc

    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        worker = threading.Thread(target=target, name="oracle-candidate", daemon=True)
        worker.start()
        worker.join(timeout)
        if worker.is_alive():
            _ask_to_stop(worker)
            worker.join(0.2)
            return TimedOut(float(timeout or 0), sink.tail())
    if "exc" in box:
        exc = box["exc"]
        frames = traceback.extract_tb(exc.__traceback__)
        inner = frames[-1].filename if frames else ""
        return Raised(type(exc).__name__, str(exc), candidate_traceback(exc, _ORACLE_DIRS),
                      sink.tail(), exc, in_oracle=_ORACLE_DIRS[0] in inner,
                      full_traceback="".join(traceback.format_exception(exc)))
    return Finished(box.get("value"), sink.tail())
