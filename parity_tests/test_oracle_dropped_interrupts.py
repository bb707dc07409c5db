"""A Ctrl-C or SIGTERM whose exception Python drops (raised inside a finaliser or a fork handler) is
raised again while the oracle's CLI runs, instead of a printed traceback and a grader that goes on."""
import sys
import time

import pytest

from npformer.cli.option_rules import Terminated, sigterm_as_interrupt
from parity_tests.oracle.interrupts import interrupts_kept


class _RaisesWhenCollected:
    def __init__(self, exc):
        self.exc = exc

    def __del__(self):
        raise self.exc


def _drop(exc):
    _RaisesWhenCollected(exc)               # collected at once: its exception is "ignored"
    time.sleep(2)                           # a stop marked again interrupts this sleep


@pytest.fixture
def reported(monkeypatch):
    """What reaches the unraisable hook that was in place before (Python's prints it)."""
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: seen.append(u.exc_value))
    return seen


@pytest.mark.parametrize("exc", [Terminated(), KeyboardInterrupt()], ids=["sigterm", "ctrl-c"])
def test_a_dropped_stop_is_raised_again_and_not_reported(reported, exc):
    with sigterm_as_interrupt(), interrupts_kept():
        with pytest.raises(type(exc)):
            _drop(exc)
    assert reported == []


def test_other_dropped_exceptions_are_reported_as_before(reported):
    with interrupts_kept():
        _drop(ValueError("from a finaliser"))
    assert [str(e) for e in reported] == ["from a finaliser"]


def test_without_the_guard_a_dropped_stop_is_lost(reported):
    with sigterm_as_interrupt():
        _drop(Terminated())                 # nothing raised: the grader would go on
    assert [type(e) for e in reported] == [Terminated]
