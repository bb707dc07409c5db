"""What the submission may not replace in its worker, taken before it loads and checked after every
stage and before every reply:

- library functions the harness uses beside it (NumPy's, json's, math's, operator's, the builtins):
  replaced, they would fool the checks the worker makes on its behaviour (inputs unchanged: a
  patched numpy.array_equal hides an in-place change). Functions only (NumPy's dispatchers and
  ufuncs included): a class or constant set on a module (`np.bool = bool` in old code) is not a
  replacement of a function.
- the harness itself (every loaded `parity_tests.*` module): each module-level function (the
  object, its code, defaults and closure cells), each class of the harness (its methods, their
  code), each dispatch table (a dict holding functions: `sandbox.modes.RUNS`, which says what each
  extra run does) and each tuple (`MODES`); a new callable set on a harness module (a builtin
  shadowed there) too.

A change fails the check (interface_error), its names said. This raises the bar, nothing more: code
that reaches this module's own snapshot (the garbage collector, frame introspection) can still hide
what it did (docs/ORACLE.md, red-team rounds 3 and 4); the parent's scan refuses a source naming
the oracle's modules (policy.scan). The parent's verdict never depends on these checks passing: it
compares arrays with its own reference.
"""
from __future__ import annotations

import sys
import types

WATCHED = ("builtins", "json", "math", "numpy", "numpy.linalg", "numpy.testing", "operator")
HARNESS = "parity_tests."
_METHODS = (types.FunctionType, staticmethod, classmethod, property)


def _functions(mod) -> dict[str, int]:
    """Callables that are not classes (NumPy's dispatchers and ufuncs included)."""
    return {name: id(obj) for name, obj in list(vars(mod).items())
            if not name.startswith("__") and callable(obj) and not isinstance(obj, type)}


def _function(f: types.FunctionType) -> tuple:
    cells = tuple(id(c.cell_contents) if _filled(c) else None for c in f.__closure__ or ())
    kw = tuple(sorted((k, id(v)) for k, v in (f.__kwdefaults__ or {}).items()))
    return ("f", id(f), id(f.__code__), id(f.__defaults__), kw, cells)


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _method(m) -> tuple:
    if isinstance(m, types.FunctionType):
        return _function(m)
    if isinstance(m, property):
        return ("p", id(m), *(_function(f) if isinstance(f, types.FunctionType) else id(f)
                              for f in (m.fget, m.fset, m.fdel)))
    inner = m.__func__
    return (type(m).__name__, id(m), _function(inner) if isinstance(inner, types.FunctionType)
            else id(inner))


def _fingerprint(v) -> tuple | None:
    """What identifies a harness module's global; None for plain data (counters, caches)."""
    if isinstance(v, types.FunctionType):
        return _function(v)
    if isinstance(v, type) and str(getattr(v, "__module__", "")).startswith(HARNESS):
        return ("c", id(v), tuple(sorted((k, _method(m)) for k, m in list(vars(v).items())
                                         if isinstance(m, _METHODS))))
    if isinstance(v, (types.ModuleType, tuple, frozenset)) or callable(v):
        return ("o", id(v))
    if isinstance(v, dict) and any(callable(x) for x in list(v.values())):
        return ("d", id(v), tuple(sorted((str(k), id(x)) for k, x in list(v.items()))))
    return None


def _harness(mod) -> dict[str, tuple]:
    out = {}
    for name, v in list(vars(mod).items()):
        fp = _fingerprint(v) if not name.startswith("__") else None
        if fp is not None:
            out[name] = fp
    return out


def snapshot() -> dict[str, dict]:
    """The identity of every watched library function and harness object already loaded."""
    snap: dict[str, dict] = {m: _functions(sys.modules[m]) for m in WATCHED if m in sys.modules}
    for name, mod in list(sys.modules.items()):
        if name.startswith(HARNESS) and isinstance(mod, types.ModuleType):
            snap["harness:" + name] = _harness(mod)
    return snap


def replaced(snap: dict[str, dict]) -> list[str]:
    """What of the snapshot is gone or another object now (`module.name`)."""
    out = []
    for key, was in snap.items():
        harness = key.startswith("harness:")
        m = key.partition(":")[2] if harness else key
        mod = sys.modules.get(m)
        now = vars(mod) if mod is not None else {}
        if not harness:
            out += [f"{m}.{n}" for n, i in was.items() if n not in now or id(now[n]) != i]
            continue
        fps = _harness(mod) if mod is not None else {}
        out += [f"{m}.{n}" for n, fp in was.items() if fps.get(n) != fp]
        out += [f"{m}.{n}" for n in fps if n not in was and callable(now.get(n))]
    return out


def failure(names: list[str]) -> dict:
    """The failure reply for a submission that replaced library functions or the harness."""
    ours = [n for n in names if n.startswith(HARNESS)]
    what = ("the oracle's own harness in its process (the code that runs and checks the candidate "
            "beside it: its other modes, its checks of inputs; a submission written against the "
            "oracle's internals)" if ours else
            "library functions in its process (ones the oracle's harness uses beside it to check "
            "the candidate)")
    shown = (ours or names)[:5]
    return {"verdict": "interface_error",
            "message": "the submission replaced " + ", ".join(shown)
                       + (f" and {len(names) - len(shown)} more" if len(names) > len(shown) else "")
                       + f", {what}; nothing it returned was used"}
