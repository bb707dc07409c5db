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


RECOGNISE = ORACLE / "reading" / "recognise"
RECOGNISERS = frozenset(f.stem for f in RECOGNISE.glob("*.py") if f.stem != "__init__")


def recogniser_reaches(source: str, modules=RECOGNISERS) -> list[tuple[int, str]]:
    """Imports of a module inside recognise/ (and reads of one as `recognise.<module>`): everything
    outside recognise/ must go through the registry, recognise/__init__.py."""
    found = []
    for n in ast.walk(ast.parse(source)):
        if isinstance(n, ast.ImportFrom):
            parts = (n.module or "").split(".")
            if "recognise" in parts:
                below = parts[parts.index("recognise") + 1:]
                names = [a.name for a in n.names if a.name in modules]
                if below or names:
                    found.append((n.lineno, ast.unparse(n)))
        elif isinstance(n, ast.Import):
            for a in n.names:
                parts = a.name.split(".")
                if "recognise" in parts and parts[-1] != "recognise":
                    found.append((n.lineno, ast.unparse(n)))
        elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "recognise" \
                and n.attr in modules:
            found.append((n.lineno, ast.unparse(n)))
    return found


def test_the_recogniser_import_finder_finds_what_it_should():
    planted = ("from . import naming, recognise\n"
               "from .recognise import hooks, MISSING\n"
               "from .recognise import valid_lens\n"
               "from .recognise.configs import CONFIG_ARG_NAMES\n"
               "from ..reading.recognise import head_axes as h\n"
               "import parity_tests.oracle.reading.recognise.lazy\n"
               "import parity_tests.oracle.reading.recognise\n"
               "x = recognise.lazy.pending(m) + recognise.hooks('lazy').pending(m)\n")
    assert [e for _, e in recogniser_reaches(planted)] == [
        "from .recognise import valid_lens", "from .recognise.configs import CONFIG_ARG_NAMES",
        "from ..reading.recognise import head_axes as h", "import parity_tests.oracle.reading.recognise.lazy",
        "recognise.lazy"]


def test_code_outside_recognise_reaches_recognisers_only_through_the_registry():
    assert {"valid_lens", "head_axes", "configs", "base"} <= RECOGNISERS, "the check looks at the wrong folder"
    outside = [f for f in FILES if RECOGNISE not in f.parents]
    assert len(outside) > 20
    bad = [f"{f.relative_to(ORACLE)}:{line}: {expr}" for f in outside
           for line, expr in recogniser_reaches(f.read_text())]
    assert not bad, "ask recognise.hooks(kind) (register the entry in recognise/__init__.py) instead:\n" \
        + "\n".join(bad)


def test_the_registry_answers_an_unknown_kind_or_entry_with_a_clear_error():
    recognise = importlib.import_module("parity_tests.oracle.reading.recognise")
    with pytest.raises(KeyError, match="no hook kind 'nonsense'.*'forward'"):
        recognise.hooks("nonsense")
    with pytest.raises(AttributeError, match="kind 'forward' have no 'nonsense'.*'take_keys'"):
        recognise.hooks("forward").nonsense
    assert recognise.hooks("forward").take_keys.__module__.endswith("recognise.valid_lens")
