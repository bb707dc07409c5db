"""The argument types of `python -m benchmarks`: each turns one option's text into its value or
refuses it with argparse's one-line usage error, naming what was expected and what came."""
from __future__ import annotations

import argparse
import math

from benchmarks.machine import available_cores
from npformer.cli.argtypes import COUNT_MAX


def csv_names(s: str) -> list[str]:
    vals = [x.strip() for x in s.split(",") if x.strip()]
    if not vals:                    # an empty list would read as "all": the longest run there is
        raise argparse.ArgumentTypeError(f"expected comma-separated names, got {s!r}")
    return vals


def int_at_least(lo: int):
    def parse(s: str) -> int:
        try:
            v = int(s)
        except ValueError:
            v = None
        if v is None or v < lo:
            raise argparse.ArgumentTypeError(f"expected an integer >= {lo}, got {s!r}")
        if v > COUNT_MAX:
            raise argparse.ArgumentTypeError(f"expected an integer from {lo} to 2**63 - 1 (int64's "
                                             f"largest value), got {s!r}")
        return v
    return parse


def seconds(s: str) -> float:
    try:
        v = float(s)
    except ValueError:
        v = float("nan")
    if not (math.isfinite(v) and v > 0):
        raise argparse.ArgumentTypeError(f"expected a finite number of seconds > 0, got {s!r}")
    return v


def probability(s: str) -> float:
    try:
        v = float(s)
    except ValueError:
        v = float("nan")
    if not (math.isfinite(v) and 0.0 <= v < 1.0):
        raise argparse.ArgumentTypeError(f"expected a probability in [0, 1), got {s!r}")
    return v


def threads_arg(s: str) -> int:
    """A thread count in [1, the cores this process may use]: more only oversubscribes the cores
    and measures the contention."""
    v = int_at_least(1)(s)
    if v > available_cores():
        raise argparse.ArgumentTypeError(f"expected at most {available_cores()} (the cores "
                                         f"available here), got {s!r}")
    return v


def thread_list(s: str) -> list[int]:
    vals = int_list(s)
    for v in vals:
        threads_arg(str(v))
    return vals


def int_list(s: str) -> list[int]:
    try:
        vals = [int(x) for x in csv_names(s)]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated positive ints, got {s!r}")
    if not vals or min(vals) < 1:
        raise argparse.ArgumentTypeError(f"expected comma-separated positive ints, got {s!r}")
    return vals
