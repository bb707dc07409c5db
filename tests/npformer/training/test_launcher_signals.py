"""The multi-process launcher holds a Ctrl-C or SIGTERM that comes while its workers run until its
next poll, and raises it there through the caller's own handler: a signal raised anywhere could land
inside the relay that copies the workers' stderr, where a KeyboardInterrupt can leave its queue's lock
held and the launcher hung after stopping its workers, holding the caller's output. Either way every
worker is stopped and the caller's handlers are back afterwards."""
from __future__ import annotations

import os
import signal
import sys
import threading

import pytest

from npformer.training import launcher

pytestmark = pytest.mark.skipif(threading.current_thread() is not threading.main_thread(),
                                reason="signal handlers need the main thread")


def _sleeper(tmp_path) -> list[str]:
    """A worker that writes its pid, then sleeps far longer than any test."""
    code = f"import os, time; open({str(tmp_path / 'pid')!r}, 'w').write(str(os.getpid())); time.sleep(60)"
    return [sys.executable, "-c", code]


def _gone(tmp_path) -> bool:
    try:
        os.kill(int((tmp_path / "pid").read_text()), 0)
    except ProcessLookupError:
        return True
    return False


def _signal_inside_the_relay(monkeypatch, tmp_path, signum) -> dict:
    """Make the relay's first flush after the worker has started send `signum` to this process and
    then go on with its own work; `seen["relay_finished"]` counts the flushes that ran to the end."""
    seen = {"sent": False, "relay_finished": 0}
    real = launcher._Relay.flush

    def flush(self, *args, **kwargs):
        if not seen["sent"] and (tmp_path / "pid").exists():
            seen["sent"] = True
            os.kill(os.getpid(), signum)             # delivered now, in the middle of the relay
            sum(range(10_000))                        # many bytecode boundaries a handler may run at
            seen["relay_finished"] += 1
        return real(self, *args, **kwargs)

    monkeypatch.setattr(launcher._Relay, "flush", flush)
    return seen


def test_a_ctrl_c_in_the_relay_is_raised_at_the_next_poll_and_stops_the_worker(monkeypatch, tmp_path):
    # Python's own Ctrl-C handler, whatever the test process had (a test runner's worker may hold
    # another one, or ignore SIGINT)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        seen = _signal_inside_the_relay(monkeypatch, tmp_path, signal.SIGINT)
        with pytest.raises(KeyboardInterrupt):
            launcher.run_workers(_sleeper(tmp_path), 1, grace=2.0)
        assert seen["sent"] and seen["relay_finished"] == 1      # the relay was not cut short
        assert _gone(tmp_path)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_ctrl_c_the_caller_ignores_stays_ignored(monkeypatch, tmp_path):
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        seen = _signal_inside_the_relay(monkeypatch, tmp_path, signal.SIGINT)
        code = [sys.executable, "-c", f"open({str(tmp_path / 'pid')!r}, 'w').close(); "
                                      f"import time; time.sleep(1)"]
        assert launcher.run_workers(code, 1, grace=2.0) == 0
        assert seen["sent"] and signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)


class _Stopped(Exception):
    pass


def _raise_stopped(signum, frame):
    raise _Stopped()


def test_a_sigterm_reaches_the_callers_handler_after_the_relay(monkeypatch, tmp_path):
    previous = signal.signal(signal.SIGTERM, _raise_stopped)
    try:
        seen = _signal_inside_the_relay(monkeypatch, tmp_path, signal.SIGTERM)
        with pytest.raises(_Stopped):
            launcher.run_workers(_sleeper(tmp_path), 1, grace=2.0)
        assert seen["relay_finished"] == 1
        assert _gone(tmp_path)
        assert signal.getsignal(signal.SIGTERM) is _raise_stopped
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_the_callers_handlers_are_back_after_a_run_that_ends_well():
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    assert launcher.run_workers([sys.executable, "-c", "pass"], 2) == 0
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
