"""Code written for a newer Python than the one the oracle runs: a load error that names what the
code used and the version it needs, instead of a bare `ImportError: cannot import name 'override'
from 'typing'` or `SyntaxError: invalid syntax` at a line that is valid Python 3.12
(`type RangeStr = str`). The verdict stays LOAD_ERROR; only the report says why."""
from __future__ import annotations

import re
import sys

NEWER_NAMES: dict[tuple[str, str], tuple[int, int]] = {
    **{("typing", n): (3, 11) for n in ("Self", "LiteralString", "Never", "assert_never",
                                        "reveal_type", "Required", "NotRequired", "Unpack",
                                        "TypeVarTuple", "dataclass_transform", "assert_type")},
    **{("typing", n): (3, 12) for n in ("override", "TypeAliasType")},
    **{("typing", n): (3, 13) for n in ("ReadOnly", "TypeIs", "NoDefault")},
    ("itertools", "batched"): (3, 12), ("datetime", "UTC"): (3, 11),
    ("enum", "StrEnum"): (3, 11), ("warnings", "deprecated"): (3, 13),
}
"""(module, name) -> the Python version that added it to the standard library."""

NEWER_MODULES = {"tomllib": (3, 11)}

NEWER_SYNTAX: tuple[tuple[re.Pattern, tuple[int, int], str], ...] = (
    (re.compile(r"^\s*type\s+[A-Za-z_]\w*\s*(\[[^\]]*\])?\s*="), (3, 12), "a `type X = ...` statement"),
    (re.compile(r"^\s*(async\s+)?def\s+\w+\s*\["), (3, 12), "a generic function `def f[T](...)`"),
    (re.compile(r"^\s*class\s+\w+\s*\["), (3, 12), "a generic class `class C[T]:`"),
    (re.compile(r"^\s*except\s*\*"), (3, 11), "`except*`"),
)

_IMPORT = re.compile(r"cannot import name '(\w+)' from '([\w.]+)'")
_NO_MODULE = re.compile(r"No module named '([\w.]+)'")
_WHERE = re.compile(r'File "[^"]+", line \d+')


def _hint(need: tuple[int, int], what: str) -> str | None:
    if sys.version_info[:2] >= need:
        return None
    here = ".".join(map(str, sys.version_info[:3]))
    return (f"the code needs Python {need[0]}.{need[1]} or newer ({what}); the oracle runs Python "
            f"{here}: run it under a newer Python")


def _syntax_line(traceback: str) -> str | None:
    """The source line a SyntaxError points at: the line its traceback prints after the last
    `File "...", line N` (nothing is read from disk)."""
    lines = (traceback or "").splitlines()
    at = [i for i, text in enumerate(lines) if _WHERE.search(text)]
    return lines[at[-1] + 1] if at and at[-1] + 1 < len(lines) else None


def newer_python_hint(type_name: str, message: str, traceback: str = "") -> str | None:
    """Why a load failed when the code needs a newer Python than this one, or None."""
    if type_name == "ImportError" and (m := _IMPORT.search(message or "")):
        need = NEWER_NAMES.get((m.group(2), m.group(1)))
        return None if need is None else _hint(need, f"`{m.group(2)}.{m.group(1)}`")
    if type_name == "ModuleNotFoundError" and (m := _NO_MODULE.search(message or "")):
        need = NEWER_MODULES.get(m.group(1))
        return None if need is None else _hint(need, f"the module `{m.group(1)}`")
    if type_name == "SyntaxError":
        text = _syntax_line(traceback)
        for pattern, need, what in NEWER_SYNTAX:
            if text is not None and pattern.search(text):
                return _hint(need, what)
    return None
