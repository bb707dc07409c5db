"""Names NumPy 2 (and 1.24 before it) removed, given back with their old meaning to code written
for NumPy 1: `np.float_`, `np.NaN`, `np.Inf`, `np.float`, `np.int`, `np.product`, ... Course and
library code older than NumPy 2.0 uses them in type annotations and dtypes (`NDArray[np.float_]`,
`astype(np.float)`), and under the grader's NumPy 2 its import raised AttributeError: a LOAD_ERROR
for code whose arithmetic is the paper's.

Each name is exactly what NumPy 1 made it (an alias of a type or function NumPy 2 still has, as
its own deprecation message says: `np.float_` is `np.float64`, `np.float` the builtin `float`);
nothing NumPy 2 defines changes, since a module's `__getattr__` is consulted only for names it
does not have. `install` wraps `numpy.__getattr__` in the process it is called in (the worker
that loads the submission); the names the candidate looked up are recorded in order, and the
load's notes say which were given. The wrapper falls through to NumPy's own for every other name,
so a misspelt name still raises NumPy's error.
"""
from __future__ import annotations

import ast

REMOVED: dict[str, str] = {
    # removed in NumPy 2.0 (the NumPy 2.0 migration guide's table)
    "float_": "float64", "complex_": "complex128", "cfloat": "complex128",
    "singlecomplex": "complex64", "longfloat": "longdouble", "clongfloat": "clongdouble",
    "longcomplex": "clongdouble", "string_": "bytes_", "unicode_": "str_",
    "Inf": "inf", "Infinity": "inf", "infty": "inf", "PINF": "inf", "NaN": "nan", "NAN": "nan",
    "product": "prod", "cumproduct": "cumprod", "sometrue": "any", "alltrue": "all",
    "round_": "round",
    # removed in NumPy 1.24: the builtin types they were aliases of
    "float": "builtins.float", "int": "builtins.int", "object": "builtins.object",
    "str": "builtins.str", "complex": "builtins.complex", "unicode": "builtins.str",
}
NEGATIVE = {"NINF": "inf"}
"""Names NumPy 1 defined as the negative of another: `np.NINF` is `-np.inf`."""

USED: list[str] = []
"""The removed names looked up since `install`, in order (each once)."""


def _value(np, name: str):
    import builtins
    if name in NEGATIVE:
        return -getattr(np, NEGATIVE[name])
    target = REMOVED[name]
    if target.startswith("builtins."):
        return getattr(builtins, target.split(".", 1)[1])
    return getattr(np, target)


def install() -> None:
    """Give the removed names back in this process (idempotent); clears USED."""
    import numpy as np
    USED.clear()
    original = np.__dict__.get("__getattr__")
    if getattr(original, "removed_names_given", False):
        return

    def __getattr__(name: str):
        if name in REMOVED or name in NEGATIVE:
            if name not in USED:
                USED.append(name)
            return _value(np, name)
        if original is None:
            raise AttributeError(f"module 'numpy' has no attribute {name!r}")
        return original(name)

    __getattr__.removed_names_given = True
    np.__getattr__ = __getattr__


def _shown(name: str) -> str:
    if name in NEGATIVE:
        return f"np.{name} as -np.{NEGATIVE[name]}"
    target = REMOVED[name]
    return f"np.{name} as {target.split('.', 1)[1] if target.startswith('builtins.') else 'np.' + target}"


def text_names(path: str) -> list[str]:
    """The removed names the file at `path` spells as `np.<name>` / `numpy.<name>` (read with
    `ast`, nothing runs): those its functions look up only when called."""
    try:
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), filename=path)
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return []
    return list(dict.fromkeys(
        n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
        and n.value.id in ("np", "numpy") and (n.attr in REMOVED or n.attr in NEGATIVE)))


def note(path: str | None = None) -> str | None:
    """What the candidate was given (names looked up so far, then those the file at `path` spells),
    or None when it uses no removed name."""
    used = list(dict.fromkeys([*USED, *(text_names(path) if path else [])]))
    if not used:
        return None
    return (f"the candidate uses names NumPy 2 removed, given their NumPy 1 meaning (the grader "
            f"runs NumPy 2): {', '.join(_shown(n) for n in used)}")
