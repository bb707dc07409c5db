"""Library functions the worker's harness uses beside the submission (NumPy's, json's, math's, the
builtins): replaced by the submission, they would fool the checks the worker makes on its
behaviour (inputs unchanged: a patched numpy.array_equal hides an in-place change). Their
identities are taken before the submission loads; a function replaced afterwards fails the check
(interface_error), its name said. Functions only (NumPy's dispatchers and ufuncs included): a class or constant set on a
module (`np.bool = bool` in old code) is not a replacement of a function.

This raises the bar, nothing more: code that rewrites the harness's own modules or this snapshot
in its process can still hide what it did (see docs/ORACLE.md, red-team round 3). The parent's
verdict never depends on these checks passing: it compares arrays with its own reference.
"""
from __future__ import annotations

import sys

WATCHED = ("builtins", "json", "math", "numpy", "numpy.linalg", "numpy.testing", "operator")


def _functions(mod) -> dict[str, int]:
    """Callables that are not classes (NumPy's dispatchers and ufuncs included)."""
    return {name: id(obj) for name, obj in list(vars(mod).items())
            if not name.startswith("__") and callable(obj) and not isinstance(obj, type)}


def snapshot() -> dict[str, dict[str, int]]:
    """The identity of every function of the watched modules already imported."""
    return {m: _functions(sys.modules[m]) for m in WATCHED if m in sys.modules}


def replaced(snap: dict[str, dict[str, int]]) -> list[str]:
    """Functions of the snapshot that are gone or are another object now (`module.name`)."""
    out = []
    for m, funcs in snap.items():
        mod = sys.modules.get(m)
        now = vars(mod) if mod is not None else {}
        out += [f"{m}.{n}" for n, i in funcs.items() if n not in now or id(now[n]) != i]
    return out


def failure(names: list[str]) -> dict:
    """The failure reply for a submission that replaced library functions."""
    return {"verdict": "interface_error",
            "message": "the submission replaced " + ", ".join(names[:5])
                       + (f" and {len(names) - 5} more" if len(names) > 5 else "")
                       + " in its process (library functions the oracle's harness uses beside it "
                         "to check the candidate); nothing it returned was used"}
