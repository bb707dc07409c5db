"""The oracle's code keeps the shape that lets it grow without special cases: no module reaches into
another object's private members, no file is over 400 lines, and every recogniser that has the shape
of a registered one (a probe, a constructor value) is in the registry, the only place that runs it."""
from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

ORACLE = Path(__file__).parent / "oracle"
FILES = sorted(ORACLE.rglob("*.py"))

# private names of objects the oracle does not own, each with why it is read
FOREIGN = {
    "os._exit": "the worker leaves without running the submission's atexit handlers",
    "sys._getframe": "the audit hook finds its caller's frame",
    "cfg._attn_implementation": "transformers' config field selecting eager attention (weights returned)",
}


def private_reaches(source: str) -> list[tuple[int, str]]:
    """Attribute reads/writes of a `_name` on anything but self, cls or a class of the same file."""
    tree = ast.parse(source)
    own = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    found = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Attribute) and n.attr.startswith("_") and not n.attr.startswith("__"):
            v = n.value
            if isinstance(v, ast.Name) and (v.id in ("self", "cls") or v.id in own):
                continue
            found.append((n.lineno, ast.unparse(n)))
    return found


def test_the_private_reach_finder_finds_what_it_should():
    src = "class A:\n    def f(self, b):\n        self._x = A._y\n        return b._z + c.d._w\n"
    assert [e for _, e in private_reaches(src)] == ["b._z", "c.d._w"]


def test_no_oracle_module_reaches_into_another_objects_private_members():
    bad = [f"{f.relative_to(ORACLE)}:{line}: {expr}" for f in FILES
           for line, expr in private_reaches(f.read_text()) if expr not in FOREIGN]
    assert not bad, "use (or add) a public accessor instead:\n" + "\n".join(bad)


def test_no_oracle_file_or_oracle_test_is_over_400_lines():
    tests = sorted(ORACLE.parent.glob("test_oracle*.py"))
    long = {str(f.relative_to(ORACLE.parent)): n for f in FILES + tests
            if (n := len(f.read_text().splitlines())) > 400}
    assert len(tests) > 10 and not long, long


@pytest.mark.parametrize("hook, params, registry", [("probe", ["adapter"], "PROBES"),
                                                    ("value", ["ctx", "param", "values"], "CONSTRUCTOR")])
def test_every_recogniser_of_a_registered_shape_is_registered(hook, params, registry):
    recognise = importlib.import_module("parity_tests.oracle.reading.recognise")
    shaped = []
    for f in sorted((ORACLE / "reading" / "recognise").glob("*.py")):
        if f.stem in ("__init__", "base"):
            continue
        mod = importlib.import_module(f"parity_tests.oracle.reading.recognise.{f.stem}")
        fn = getattr(mod, hook, None)
        if callable(fn) and list(inspect.signature(fn).parameters) == params:
            shaped.append(fn)
    assert shaped, f"no recogniser has a {hook}{tuple(params)}: the check looks at the wrong files"
    registered = getattr(recognise, registry)
    missing = [f"{fn.__module__}.{hook}" for fn in shaped if fn not in registered]
    assert not missing, f"defined but not in recognise.{registry}: {missing}"
