"""Load a candidate named on the command line: `path/to/file.py:Name` or `package.module:Name`.

    path/to/file.py:Name            a class, factory or function defined in a file (sibling imports work:
                                    the file's folder goes on sys.path, last when a module in it
                                    would shadow the package the file imports itself through,
                                    `from transformer.x import` in transformer/; a file importing its siblings
                                    relatively, `from .linear import Linear`, is imported as a module
                                    of its folder's package; one importing its own folder by name,
                                    `from models.x import` in models/, finds that folder through the
                                    folder above, which stays unseen: see package_import.py)
    package.module:Name             anything importable
    ...:Outer.inner                 an attribute path inside the module
    ...:forward_name,backward_name  a NumPy forward/backward pair given explicitly

A NumPy function named `x_forward` whose module also defines `x_backward` is taken as a pair
automatically. A third-party package the file imports but the grader lacks gets a stand-in that
raises when used (standins.py), so the file's other components can still be checked; names NumPy 2
removed (`np.float_`) get their NumPy 1 meaning (numpy_removed_names.py). Importing
runs the candidate's top-level code, so it runs under the same protection as every other
candidate call (time limit, output captured, exceptions reported); any failure raises `LoadError`,
which the CLI turns into exit status 2.
"""
from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.util
import os
import sys
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from . import numpy_removed_names
from .calls import Finished, Raised, TimedOut, run_limited
from .notebook_calls import left_out_note
from .package_import import (
    CALLS_LEFT_OUT,
    LEFT_OUT,
    anchor_folder,
    exec_file_as,
    import_in_package,
    own_folder_package,
    own_package_root,
    reach_hint,
    shadows_own_package,
    within,
)
from .python_version import newer_python_hint
from .script_code import MAIN_SET, main_constants_note, skipped_note
from .standins import import_with_standins


class LoadError(Exception):
    """The candidate cannot be loaded (bad spec, missing file or name, import failure)."""


@dataclass
class Loaded:
    """What a spec resolved to."""

    spec: str
    obj: Any                      # the class, factory, function or instance named
    backward: Any = None          # the backward function of a NumPy pair, when there is one
    module: ModuleType | None = None
    name: str = ""
    backward_name: str = ""
    notes: tuple = ()             # what loading did that the report should say (standins.py)


def split_spec(spec: str) -> tuple[str, list[str]]:
    """'loc:Name' or 'loc:fwd,bwd' -> (loc, [names]); the split is at the last ':' (so C:\\x works)."""
    if not isinstance(spec, str) or ":" not in spec:
        raise LoadError(f"candidate: expected 'path/to/file.py:Name' or 'package.module:Name', "
                        f"got {spec!r}{_names_hint(spec)}")
    loc, _, names = spec.rpartition(":")
    parts = [n.strip() for n in names.split(",")]
    if not loc or not all(parts) or len(parts) > 2:
        raise LoadError(f"candidate: expected 'LOCATION:Name' or 'LOCATION:forward,backward', "
                        f"got {spec!r}")
    return loc, parts


def _names_hint(spec) -> str:
    """For a spec that is a Python file without `:Name`: the names it defines, read as text (`ast`,
    nothing imported), and the spec to give, e.g. "; ln.py defines LayerNorm: give 'ln.py:LayerNorm'"."""
    if not isinstance(spec, str) or not spec.endswith(".py") or not os.path.isfile(spec):
        return ""
    try:
        with open(spec, "rb") as f:
            tree = ast.parse(f.read(1 << 22))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return ""
    names = [n.name for n in tree.body
             if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
             and not n.name.startswith("_")]
    if not names:
        return f"; {spec} defines no public class or function at its top level"
    shown = ", ".join(names[:25]) + (f" (and {len(names) - 25} more)" if len(names) > 25 else "")
    return f"; {spec} defines {shown}: give e.g. {spec + ':' + names[0]!r}"


def _is_file_location(loc: str) -> bool:
    return loc.endswith(".py") or os.sep in loc or "/" in loc


def _import_file(path: str, package_root: str | None = None) -> ModuleType:
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise LoadError(f"candidate: file {path!r} does not exist")
    digest = hashlib.sha1(path.encode()).hexdigest()[:10]
    stem = os.path.splitext(os.path.basename(path))[0]
    mod_name = f"_oracle_candidate_{stem}_{digest}"
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    if importlib.util.spec_from_file_location(mod_name, path) is None:
        raise LoadError(f"candidate: cannot import {path!r} as Python source")
    folder = os.path.dirname(path)
    if folder not in sys.path:
        if shadows_own_package(path):   # transformer/transformer.py beside `from transformer.x import`
            sys.path.append(folder)
        else:
            sys.path.insert(0, folder)  # so `import helpers` next to the candidate works
    above = own_folder_package(path)    # `from models.x import` in models/attention.py
    if above is not None and above not in sys.path:
        sys.path.append(above)
    anchor = anchor_folder(path, package_root)
    if anchor is not None:          # `from .helpers import x`: a module of its folder's package
        return import_in_package(path, anchor)
    return exec_file_as(mod_name, path)


def _resolve_attr(module: ModuleType, dotted: str, where: str) -> Any:
    obj: Any = module
    for i, part in enumerate(dotted.split(".")):
        if not hasattr(obj, part):
            done = ".".join(dotted.split(".")[:i]) or where
            public = sorted(n for n in dir(obj) if not n.startswith("_"))
            callables = [n for n in public if callable(getattr(obj, n, None))][:25]
            raise LoadError(f"candidate: {done} has no attribute {part!r}; callables defined there: "
                            f"{', '.join(callables) or '(none)'}")
        obj = getattr(obj, part)
    return obj


def load(spec: str, timeout: float | None = 60.0, package_root: str | None = None) -> Loaded:
    """Import the candidate named by `spec` (see the module docstring); raise LoadError on failure.
    package_root: how far up a file's `from ..x` imports may reach (package_import.anchor_folder)."""
    loc, names = split_spec(spec)

    def do_import() -> tuple[ModuleType, list[str]]:
        if _is_file_location(loc):          # third-party packages not installed: standins.py
            folder = anchor_folder(loc, package_root) or os.path.dirname(os.path.abspath(loc))
            return import_with_standins(lambda: _import_file(loc, package_root), folder)
        return importlib.import_module(loc), []

    numpy_removed_names.install()           # `np.float_` in code written for NumPy 1
    outcome = run_limited(do_import, timeout)
    if isinstance(outcome, TimedOut):
        raise LoadError(f"candidate: importing {loc!r} did not finish within {timeout:g} s "
                        f"(top-level code that trains or waits?)")
    if isinstance(outcome, Raised):
        if outcome.type_name in ("ModuleNotFoundError",) and not _is_file_location(loc):
            raise LoadError(f"candidate: cannot import module {loc!r}: {outcome.message} (give a "
                            f"file path ending in .py, or run from the folder that holds the package)")
        hint = reach_hint(loc, package_root) if _is_file_location(loc) and \
            outcome.type_name == "ImportError" and "relative import" in outcome.message else None
        hint = hint or newer_python_hint(outcome.type_name, outcome.message, outcome.traceback)
        raise LoadError(f"candidate: importing {loc!r} raised {outcome.describe()}"
                        f"{f' ({hint})' if hint else ''}\n{outcome.traceback.rstrip()}")
    assert isinstance(outcome, Finished)
    module, notes = outcome.value
    if (given := numpy_removed_names.note(loc if _is_file_location(loc) else None)) is not None:
        notes = [*notes, given]
    left_out = LEFT_OUT.get(os.path.abspath(loc)) if _is_file_location(loc) else None
    if left_out:
        notes = [*notes, skipped_note(os.path.basename(loc), left_out)]
    if _is_file_location(loc) and (main_set := MAIN_SET.get(os.path.abspath(loc))):
        notes = [*notes, main_constants_note(os.path.basename(loc), main_set)]
    calls_out = CALLS_LEFT_OUT.get(os.path.abspath(loc)) if _is_file_location(loc) else None
    if calls_out:
        notes = [*notes, left_out_note(os.path.basename(loc), calls_out)]
    found = own_package_root(loc) if _is_file_location(loc) else None
    if found is not None and not within(found, package_root):
        notes = [*notes, f"its `from ..x` imports reach {found!r}, the package it belongs to (that "
                         f"folder and its own hold __init__.py): the worker sees that folder, as "
                         f"--package-root {found} would let it"]
    obj = _resolve_attr(module, names[0], loc)
    backward = None
    backward_name = ""
    if len(names) == 2:
        backward_name = names[1]
        backward = _resolve_attr(module, backward_name, loc)
        if not callable(backward):
            raise LoadError(f"candidate: backward {backward_name!r} is not callable")
    elif names[0].endswith("_forward") and hasattr(module, names[0][:-len("_forward")] + "_backward"):
        backward_name = names[0][:-len("_forward")] + "_backward"
        backward = getattr(module, backward_name)
    if not callable(obj) and not hasattr(obj, "forward"):
        raise LoadError(f"candidate: {names[0]!r} is a {type(obj).__name__}, expected a class, a "
                        f"function or a module instance")
    return Loaded(spec=spec, obj=obj, backward=backward, module=module, name=names[0],
                  backward_name=backward_name, notes=tuple(notes))


def from_object(obj: Any, backward: Any = None, name: str | None = None) -> Loaded:
    """Wrap a Python object handed to the API directly (no import)."""
    nm = name or getattr(obj, "__qualname__", None) or type(obj).__name__
    mod = sys.modules.get(getattr(obj, "__module__", "") or "")
    return Loaded(spec=f"<python object {nm}>", obj=obj, backward=backward, module=mod, name=nm,
                  backward_name=getattr(backward, "__name__", "") if backward is not None else "")
