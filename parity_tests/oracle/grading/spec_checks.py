"""Every value of an assignment spec checked for its type and range before any submission runs:
a bad one is a one-line SpecError naming the key, what was expected and what came (an instructor's
`memory_mb = 1` or `points = inf` must not grade a whole class 0, or oddly, with exit 0).
"""
from __future__ import annotations

import math
import os
import re
from typing import Any

MAX_EXAMPLES = 10_000
MAX_TIMEOUT = 3600.0
MAX_RUNS = 16                  # the worker may answer at most 16 runs (backend.validate_run)
MEMORY_MB = (256, 1 << 20)
MAX_POINTS = 1e6
_MODULE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


class SpecError(ValueError):
    pass


def need(cond: bool, where: str, expected: str, got: Any) -> None:
    if not cond:
        raise SpecError(f"{where}: expected {expected}, got {got!r}")


def integer(v, where: str, lo: int, hi: int | None = None) -> None:
    need(isinstance(v, int) and not isinstance(v, bool) and v >= lo and (hi is None or v <= hi),
         where, f"an integer {lo}..{hi}" if hi is not None else f"an integer >= {lo}", v)


def number(v, where: str, lo: float, hi: float, lo_open: bool = False) -> None:
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and \
        (v > lo if lo_open else v >= lo) and v <= hi
    need(ok, where, f"a finite number {'>' if lo_open else '>='} {lo:g} and <= {hi:g}", v)


def inside_path(v, where: str) -> None:
    """A .py file path relative to the submission's folder, inside it."""
    ok = isinstance(v, str) and v.endswith(".py") and not os.path.isabs(v) and \
        ".." not in v.replace("\\", "/").split("/") and "\0" not in v and v.strip() == v
    need(ok, where, "a .py file name relative to the submission's folder (no absolute path, "
         "no '..')", v)


def modules(v, where: str) -> None:
    need(isinstance(v, list) and all(isinstance(m, str) and _MODULE.match(m) for m in v), where,
         "a list of module names, e.g. [\"npformer\", \"torchformer\"]", v)


def assignment(spec) -> None:
    need(isinstance(spec.name, str) and spec.name.strip() != "", "[assignment] name",
         "a non-empty string", spec.name)
    integer(spec.examples, "[assignment] examples", 1, MAX_EXAMPLES)
    integer(spec.seed, "[assignment] seed", 0)
    number(spec.timeout, "[assignment] timeout", 0.0, MAX_TIMEOUT, lo_open=True)
    integer(spec.runs, "[assignment] runs", 1, MAX_RUNS)
    modules(spec.forbid_import, "[assignment] forbid_import")
    modules(spec.allow_import, "[assignment] allow_import")
    integer(spec.memory_mb, "[assignment] memory_mb", *MEMORY_MB)
    inside_path(spec.entry_file, "[assignment] entry_file")


def entry(v, where: str) -> None:
    need(isinstance(v, str) and v != "", where, "a name, or \"file.py:Name\"", v)
    if ":" in v:
        fname, _, name = v.rpartition(":")
        inside_path(fname, where + " (its file)")
        need(name.isidentifier(), where, "file.py:Name with Name a Python identifier", v)
    else:
        need(all(p.isidentifier() for p in v.split(".")), where, "a Python name in entry_file, or "
             "\"file.py:Name\" for a name in another file of the submission", v)


def settings(values, comp, where: str) -> None:
    from ..components.base import parse_settings

    need(isinstance(values, dict), where, "a table of --set values", values)
    try:                                  # the command line's parser, ranges and clashes
        parse_settings(comp, values, where)
    except ValueError as exc:
        raise SpecError(str(exc)) from None


def hidden(h, where: str) -> None:
    need(isinstance(h, dict) and set(h) <= {"seed", "examples", "strict", "points"},
         where, "a table of seed, examples, strict, points", h)
    if "seed" in h:
        integer(h["seed"], where + " seed", 0)
    if "examples" in h:
        integer(h["examples"], where + " examples", 1, MAX_EXAMPLES)
    if "strict" in h:
        need(isinstance(h["strict"], bool), where + " strict", "true or false", h["strict"])
    if "points" in h:
        number(h["points"], where + " points", 0.0, MAX_POINTS)


def options(o: dict, where: str) -> None:
    if "examples" in o:
        integer(o["examples"], where + " examples", 1, MAX_EXAMPLES)
    if "seed" in o:
        integer(o["seed"], where + " seed", 0)
    if "timeout" in o:
        number(o["timeout"], where + " timeout", 0.0, MAX_TIMEOUT, lo_open=True)
    for k in ("strict", "check_dtype", "allow_unmapped"):
        if k in o:
            need(isinstance(o[k], bool), f"{where} {k}", "true or false", o[k])
