"""Import a submission file that imports its siblings relatively (`from .linear import Linear`,
`from ..attention import MultiHeadAttention`): such a file only loads as a module of a package, and
loaded on its own by path it raises "attempted relative import with no known parent package".

The folder its deepest relative import reaches (the file's folder for `from .x`; one up for
`from ..x` when that folder is a package itself (`own_package_root`) or lies in a folder on the
oracle's PYTHONPATH, which the worker sees anyway (`IMPORT_ROOTS`), ... otherwise only inside the
folder the grader names with `--package-root`) becomes a package
of a fresh name (`_oracle_package_<digest>`) whose search path is that folder; the file is then
imported as its module (`_oracle_package_<digest>.model.sdpa`), so each relative import finds the
sibling file it names. The sibling files it imports relatively count too: `from ._base import
Module` in `nn/layers/transformer.py`, whose `_base.py` does `from ..engine import Module`, reaches
`nn/` (`reached_folder`). The top folder's own `__init__.py` is not run (it often imports the whole
project: training scripts, tokenizers); the folders between it and the file are imported as Python
imports them (their `__init__.py`, where there is one, runs).

Only the file's text is read here (its import statements, with `ast`); nothing of it runs until
the import itself, which the loader runs in the worker under its limits like any candidate import.
"""
from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.machinery
import importlib.util
import os
import sys
from types import ModuleType

from .script_code import without_script

LEFT_OUT: dict[str, list[int]] = {}     # file -> lines of the script statements not run
IMPORT_ROOTS: list[str] = []    # the oracle's PYTHONPATH folders the worker sees (set at "prepare")
ORACLE_HOME = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
FOLLOWED = 64                   # files read at most when following relative imports
CALLS_LEFT_OUT: dict[str, list[int]] = {}   # file -> lines of notebook set-up calls not run


def not_installed(package: str) -> bool:
    """Whether a top-level package is absent where the oracle runs (its import gets a stand-in)."""
    try:
        return importlib.util.find_spec(package) is None
    except (ImportError, ValueError):
        return False


def _tree(path: str) -> ast.Module | None:
    """The parsed text of the file at `path`, or None when it cannot be read or parsed (the
    import then reports what is wrong)."""
    try:
        with open(path, encoding="utf-8") as fh:
            return ast.parse(fh.read(), filename=path)
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return None


def _absolute_imports(path: str) -> list[str]:
    """The dotted modules the file at `path` imports absolutely (`import a.b`, `from a.b import
    c`: "a.b"); none when it cannot be parsed."""
    tree = _tree(path)
    if tree is None:
        return []
    return [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 0
            and n.module] + [a.name for n in ast.walk(tree) if isinstance(n, ast.Import)
                             for a in n.names]


def relative_depth(path: str) -> int:
    """The deepest relative import of the file at `path` (1 for `from .x`, 2 for `from ..x`), 0
    when it has none or its text cannot be parsed."""
    tree = _tree(path)
    return 0 if tree is None else max(
        (n.level for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)), default=0)


def _relative_imports(path: str) -> list[tuple[int, str]]:
    """(level, dotted module) of each relative import of the file at `path` (`from ..engine import
    x` is (2, "engine"), `from . import parts` is (1, "parts")); none when it cannot be parsed."""
    tree = _tree(path)
    if tree is None:
        return []
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.level:
            out += [(n.level, n.module)] if n.module else [(n.level, a.name) for a in n.names]
    return out


def reached_folder(path: str) -> str | None:
    """The highest folder the relative imports of the file at `path` reach, following them into
    the files they import (a sibling's own `from ..x` counts as the file's): `from .x` reaches the
    file's folder, `from ..x` one up. None when the file has no relative import. Only text is read
    (at most FOLLOWED files), nothing runs."""
    start = os.path.abspath(path)
    reached: list[str] = []
    todo, seen = [start], {start}
    while todo and len(seen) <= FOLLOWED:
        f = todo.pop()
        for level, module in _relative_imports(f):
            base = os.path.dirname(f)
            for _ in range(level - 1):
                base = os.path.dirname(base)
            reached.append(base)
            target = os.path.join(base, *module.split("."))
            for found in (target + ".py", os.path.join(target, "__init__.py")):
                if os.path.isfile(found) and found not in seen:
                    seen.add(found)
                    todo.append(found)
    if not reached:
        return None
    return os.path.commonpath([os.path.dirname(start), *reached])


def on_import_path(folder: str) -> bool:
    """Whether `folder` lies inside a folder on the oracle's PYTHONPATH (IMPORT_ROOTS: never this
    project nor the oracle's working directory), which the worker's view holds anyway."""
    return any(within(folder, root) for root in IMPORT_ROOTS)


def anchor_folder(path: str, package_root: str | None = None) -> str | None:
    """The folder the relative imports of the file at `path` are counted from, or None when it has
    none. `from .x` is counted from the file's own folder. `from ..x` reaches one folder up: that
    folder is returned only when it lies inside `package_root` (the grader's `--package-root`),
    or inside a folder on the oracle's PYTHONPATH (on_import_path), never by default: the worker's
    view would otherwise widen at the submission's request to the folder above it (a grader's
    folder of other submissions, hidden tests or seeds). A folder passed on the way may be a
    namespace package (no `__init__.py`), as Python 3 allows."""
    folder = reached_folder(path)
    if folder is None:
        return None
    if folder != os.path.dirname(os.path.abspath(path)) and not within(folder, package_root) \
            and own_package_root(path) != folder and not on_import_path(folder):
        return None
    return folder


def own_package_root(path: str) -> str | None:
    """The folder one above the file at `path` when the file reaches it with `from ..x` (and no
    deeper) and that folder is a Python package of its own: it holds an `__init__.py` (CS231n's
    `cs231n/classifiers/transformer.py` doing `from ..transformer_layers import *`, with
    `cs231n/__init__.py`; the file's own folder may be a namespace package, without one, as
    numpyGPT's `numpyGPT/models/`). None otherwise.

    Such a folder is the package the file is part of, so the worker may see it without
    `--package-root`. A grader's folder of submissions or of hidden tests is not a package, so
    `from ..x` reaching it still needs the flag; neither are two levels up (`from ...x`) found
    this way, nor a folder holding the oracle itself."""
    here = os.path.dirname(os.path.abspath(path))
    folder = os.path.dirname(here)
    if reached_folder(path) != folder or not os.path.isfile(os.path.join(folder, "__init__.py")):
        return None
    if within(ORACLE_HOME, folder) or folder == os.path.dirname(folder):
        return None
    return folder


def reach_hint(path: str, package_root: str | None = None) -> str | None:
    """What to pass when the file at `path` imports from above its own folder (`from ..x`) and the
    folder that import reaches is not inside `package_root`: the exact `--package-root` (the folder
    its deepest relative import reaches), or the folder that keeps it from being a package; None
    when that is not why its import failed (no such import, or one inside the package root)."""
    folder = reached_folder(path)
    here = os.path.dirname(os.path.abspath(path))
    if folder is None or folder == here or within(folder, package_root) or \
            own_package_root(path) == folder or on_import_path(folder):
        return None
    up = len(os.path.relpath(here, folder).split(os.sep))
    return (f"its `from {'.' * (up + 1)}x` imports (its own or a sibling's it imports) reach "
            f"{folder!r}, {up} folder(s) above its own, which the worker does not see by default: "
            f"pass --package-root {folder} to let it see that folder (everything in it becomes "
            f"readable to the submission)")


def within(folder: str, package_root: str | None) -> bool:
    """Whether `folder` is `package_root` or inside it (False without a package_root)."""
    if package_root is None:
        return False
    root = os.path.realpath(package_root)
    return os.path.commonpath([os.path.realpath(folder), root]) == root


def import_in_package(path: str, anchor: str) -> ModuleType:
    """Import the file at `path` as a module of a package rooted at `anchor` (see the module
    docstring); returns the module. A failure raises what the file's own code raised."""
    path, anchor = os.path.abspath(path), os.path.abspath(anchor)
    package = "_oracle_package_" + hashlib.sha1(anchor.encode()).hexdigest()[:10]
    if package not in sys.modules:
        spec = importlib.machinery.ModuleSpec(package, None, is_package=True)
        spec.submodule_search_locations = [anchor]
        sys.modules[package] = importlib.util.module_from_spec(spec)
    parts = os.path.relpath(os.path.splitext(path)[0], anchor).split(os.sep)
    parent = package
    for part in parts[:-1]:                     # the folders between: real packages (or namespaces)
        parent = f"{parent}.{part}"
        importlib.import_module(parent)
    return exec_file_as(f"{parent}.{parts[-1]}", path)


def exec_file_as(name: str, path: str) -> ModuleType:
    """The module `name` run from the source file at `path` (the one already in sys.modules when
    there is one); a module whose code raises is taken out of sys.modules again. A file that runs
    a script when imported is run without it (script_code.py; the lines go in LEFT_OUT), a
    notebook's set-up calls on packages not installed without them (notebook_calls.py)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path!r} as Python source")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        with open(path, encoding="utf-8") as fh:
            tree, lines, calls = without_script(fh.read(), path, not_installed)
    except (OSError, UnicodeDecodeError):
        tree, lines, calls = None, [], []
    try:
        if tree is None:
            spec.loader.exec_module(module)
        else:                       # a script at import: run without it (script_code.py)
            exec(compile(tree, path, "exec"), module.__dict__)  # noqa: S102 - in the worker
            if lines:
                LEFT_OUT[os.path.abspath(path)] = lines
            if calls:
                CALLS_LEFT_OUT[os.path.abspath(path)] = calls
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def shadows_own_package(path: str) -> bool:
    """Whether the file at `path` imports a package absolutely through one of its modules (`from
    transformer.feed_forward import X`, `from vision_transformer.model.utils import f`) while its
    folder also holds a module of the package's name (`transformer/transformer.py`,
    `vision_transformer/model/vision_transformer.py`): with the folder first on sys.path,
    `transformer` would be that module and the import would fail ("'transformer' is not a
    package"). Only the text is read."""
    folder = os.path.dirname(os.path.abspath(path))
    return any("." in m and os.path.isfile(os.path.join(folder, m.split(".")[0] + ".py"))
               for m in _absolute_imports(path))


def own_folder_package(path: str) -> str | None:
    """The folder above the file at `path` when the file imports its own folder as a package by
    name (`from models.layers import lin` in `models/attention.py`, as the project's scripts run
    from the folder above do), that name is not installed, and the folder is not a module file's
    namesake (`models.py` beside `models/`); None otherwise. Searching that folder for the package
    finds the file's own folder, which the worker sees anyway: nothing else of the folder above
    becomes visible (the worker's view holds only the file's folder there)."""
    here = os.path.dirname(os.path.abspath(path))
    name, above = os.path.basename(here), os.path.dirname(here)
    if not name.isidentifier() or above == here or name not in {m.split(".")[0] for m in _absolute_imports(path)}:
        return None
    if os.path.isfile(os.path.join(above, name + ".py")) or not not_installed(name):
        return None
    return None if within(ORACLE_HOME, above) else above
