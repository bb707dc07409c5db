"""What the submission may not replace or change in its worker, taken before it loads and checked
before every reply (child.py holds the check):

- library functions the harness uses beside it (NumPy's, json's, math's, operator's, the builtins):
  replaced, they would fool the checks the worker makes on its behaviour (inputs unchanged: a
  patched numpy.array_equal hides an in-place change). Each function's identity and, for a Python
  function or a NumPy dispatcher's implementation, what it runs (code, defaults, closure
  contents). Functions only: a class or constant set on a module (`np.bool = bool` in old code) is
  not a replacement of a function.
- the harness itself (every loaded `parity_tests.*` module): each module-level function (the
  object and what it runs), each class of the harness (its methods and what they run), each
  dispatch table (a dict holding functions: `sandbox.modes.RUNS`, which says what each extra run
  does), each tuple (`MODES`) and module; a new callable set on a harness module (a builtin
  shadowed there) too. Plain data (counters, caches) is not watched.

Everything is compared by identity, never through a candidate's __eq__. A change fails the check
(interface_error), its names said. This raises the bar, nothing more: code that reaches the
check's own snapshot (the garbage collector, frame introspection) or undoes its change before the
check can still hide what it did (docs/ORACLE.md, red-team round 4); the parent's scan names a
source spelling out the oracle's modules (policy.scan). The parent's verdict never depends on these
checks passing: it compares arrays with its own reference.
"""
from __future__ import annotations

import sys
import types

WATCHED = ("builtins", "json", "math", "numpy", "numpy.linalg", "numpy.testing", "operator")
HARNESS = "parity_tests."
_METHODS = (types.FunctionType, staticmethod, classmethod, property)


def _functions(mod) -> dict[str, object]:
    """Callables that are not classes (NumPy's dispatchers and ufuncs included)."""
    return {name: obj for name, obj in list(vars(mod).items())
            if not name.startswith("__") and callable(obj) and not isinstance(obj, type)}


def _code(f) -> tuple:
    """What a Python function runs (its code, defaults, closure contents), flat; a NumPy
    dispatcher's implementation's; () for a builtin."""
    f = getattr(f, "_implementation", f) if not isinstance(f, types.FunctionType) else f
    if not isinstance(f, types.FunctionType):
        return ()
    out = [f.__code__, f.__defaults__, f.__kwdefaults__]
    for c in f.__closure__ or ():
        try:
            out.append(c.cell_contents)
        except ValueError:
            out.append(None)
    return tuple(out)


def _inside(v) -> tuple:
    """What of a watched object can change without its identity changing, flat."""
    if isinstance(v, type):
        if not str(getattr(v, "__module__", "")).startswith(HARNESS):
            return ()
        out: list = []
        for k, m in list(vars(v).items()):
            if isinstance(m, _METHODS):
                out += [k, m]
                for f in ((m.fget, m.fset, m.fdel) if isinstance(m, property) else
                          (getattr(m, "__func__", m),)):
                    out += _code(f)
        return tuple(out)
    if isinstance(v, dict):
        return tuple(v) + tuple(v.values())
    return _code(v)


def _watched(v) -> bool:
    """A harness module's global worth watching; plain data (counters, caches) is not."""
    if isinstance(v, dict):
        return any(callable(x) for x in list(v.values()))
    return callable(v) or isinstance(v, (types.ModuleType, tuple, frozenset))


def _same(a: tuple, b: tuple) -> bool:
    """Identity, element by element: never a candidate's __eq__."""
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def snapshot() -> dict[str, dict]:
    """The watched library functions already imported, and every harness module's functions,
    classes, modules, tuples and dispatch tables, each with what is inside it."""
    snap: dict[str, dict] = {m: _functions(sys.modules[m]) for m in WATCHED if m in sys.modules}
    for name, mod in list(sys.modules.items()):
        if name.startswith(HARNESS) and isinstance(mod, types.ModuleType):
            snap["harness:" + name] = {k: v for k, v in list(vars(mod).items())
                                       if not k.startswith("__") and _watched(v)}
    objs: dict[int, tuple] = {}
    for kept in list(snap.values()):
        for v in kept.values():
            if id(v) not in objs:
                objs[id(v)] = (v, _inside(v))
    snap["inside:"] = objs
    return snap


def replaced(snap: dict[str, dict]) -> list[str]:
    """What of the snapshot is gone or another object now, or changed inside (`module.name`)."""
    changed = {i for i, (v, inner) in snap.get("inside:", {}).items() if not _same(inner, _inside(v))}
    out = []
    for key, was in snap.items():
        if key == "inside:":
            continue
        m = key.partition(":")[2] or key
        mod = sys.modules.get(m)
        now = vars(mod) if mod is not None else {}
        out += [f"{m}.{n}" for n, v in was.items() if now.get(n) is not v or id(v) in changed]
        if key.startswith("harness:"):
            out += [f"{m}.{n}" for n, v in list(now.items())
                    if n not in was and not n.startswith("__") and callable(v)]
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
