"""Argument types of the command line: each parses one option's text or raises
argparse.ArgumentTypeError saying what was expected and what came."""
from __future__ import annotations

import argparse
import math

__all__ = ["int_at_least", "int_in", "float_in", "positive", "non_negative", "probability", "positive_float",
           "seed_int", "file_path", "folder_path", "file_or_folder_path"]


COUNT_MAX = 2 ** 63 - 1     # int64: a step, size or count past it cannot be stored (checkpoints, numpy)


def int_at_least(lo: int, hi: int = COUNT_MAX):
    """An integer >= lo, written in digits, and at most hi (by default int64's largest value: a
    count past it cannot be stored in a checkpoint or a numpy array, so a run given one would fail
    only at its end, or never end)."""
    allowed = f"an integer >= {lo}" if hi == COUNT_MAX else f"an integer in {lo}..{hi}"

    def parse(s: str) -> int:
        try:
            v = int(s)
        except ValueError:
            hint = " (write a count in digits)" if _looks_like_number(s) else ""
            raise argparse.ArgumentTypeError(f"expected {allowed}{hint}, got {s!r}") from None
        if v < lo:
            raise argparse.ArgumentTypeError(f"expected {allowed}, got {v}")
        if v > hi:
            bound = (f"an integer from {lo} to 2**63 - 1 (int64's largest value)" if hi == COUNT_MAX
                     else allowed)
            raise argparse.ArgumentTypeError(f"expected {bound}, got {v}")
        return v
    parse.__name__ = f"int>={lo}"
    return parse


def _looks_like_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def int_in(lo: int, hi: int):
    """An integer from lo to hi (both included)."""
    parse = int_at_least(lo, hi)
    parse.__name__ = f"int in {lo}..{hi}"
    return parse


def float_in(lo: float, hi: float, lo_open: bool = False, hi_open: bool = True):
    """A number in the interval from lo to hi (each end open or closed; NaN refused)."""
    def parse(s: str) -> float:
        try:
            v = float(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {s!r}") from None
        ok = (v > lo if lo_open else v >= lo) and (v < hi if hi_open else v <= hi)
        if not ok or math.isnan(v):
            a, b = ("(" if lo_open else "["), (")" if hi_open else "]")
            raise argparse.ArgumentTypeError(f"expected a number in {a}{lo}, {hi}{b}, got {s}")
        return v
    parse.__name__ = "float"
    return parse


positive = int_at_least(1)
non_negative = int_at_least(0)
probability = float_in(0.0, 1.0)
positive_float = float_in(0.0, math.inf, lo_open=True)
FLOAT32_MAX = 3.4028234663852886e38


def learning_rate(s: str) -> float:
    """A positive learning rate a float32 update can hold: above float32's largest value the step
    is inf, and the weights turn to inf/NaN at the first step with NumPy's overflow warnings."""
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {s!r}") from None
    if not 0.0 < v <= FLOAT32_MAX:                        # NaN fails it too
        raise argparse.ArgumentTypeError(f"expected a number in (0.0, 3.4e+38] (float32's largest "
                                         f"value: above it the first update overflows), got {s}")
    return v


def seed_int(s: str) -> int:
    """A generator seed: 0 to 2**63 - 1, the range both backends take (npformer.guards.rules)."""
    from npformer.guards.rules import SEED_MAX
    v = non_negative(s)
    if v > SEED_MAX:
        raise argparse.ArgumentTypeError(f"expected an integer from 0 to 2**63 - 1 (a 64-bit "
                                         f"generator seed), got {v}")
    return v


def _path(what: str):
    """A path: any non-empty text. An empty string is refused (it is no file, yet the operating
    system's calls and pathlib read it as "not given" or as the current folder)."""
    def parse(s: str) -> str:
        if s == "":
            raise argparse.ArgumentTypeError(f"expected {what}, got an empty string")
        return s
    parse.__name__ = what
    return parse


file_path = _path("a file path")
folder_path = _path("a folder path")
file_or_folder_path = _path("a file or folder path")
