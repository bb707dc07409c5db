"""Where a whole model assembled from parts is built when its own file holds no builder: another
file of its project (`models/build_model.py` beside `models/model/transformer.py`, the Annotated
Transformer's `make_model.py` at the top of a checkout whose model lives in `models/model/`).

Read as text first (`ast`, at most FILES files): the other files of the class's folder, then,
while the folder or the one above it is a package (holds `__init__.py`; a folder between may be a
namespace package), the folder above's files and those of its other sub-folders: so last the files
of the folder holding the top package (the checkout). The
first file with exactly one module-level function that returns the class (model_factory's test)
and names a size among its arguments is imported, only when it is made of definitions
(sibling_files: no training script runs), as a module of the package it lies in when that package
is importable, else under a fresh name; the function is read from it. Only folders the worker
sees are listed (a folder it cannot list is skipped), so the search never widens the worker's view.
"""
from __future__ import annotations

import ast
import hashlib
import importlib
import os

FILES = 200


def _files(folder: str) -> list[str]:
    try:
        return [os.path.join(folder, e) for e in sorted(os.listdir(folder)) if e.endswith(".py")
                and e != "__init__.py" and not e.startswith("test")]
    except OSError:
        return []


def _folders(folder: str) -> list[str]:
    try:
        return [os.path.join(folder, e) for e in sorted(os.listdir(folder))
                if os.path.isdir(os.path.join(folder, e)) and not e.startswith((".", "__"))]
    except OSError:
        return []


def _is_package(folder: str) -> bool:
    return os.path.isfile(os.path.join(folder, "__init__.py"))


def candidate_files(own: str) -> list[str]:
    """The files to read, nearest first (see the module docstring); `own` left out."""
    folder = os.path.dirname(os.path.abspath(own))
    out = _files(folder)
    while True:
        parent = os.path.dirname(folder)
        if parent == folder or not (_is_package(folder) or _is_package(parent)):
            break
        out += _files(parent) + [f for d in _folders(parent) if d != folder for f in _files(d)]
        folder = parent
    seen, kept = {os.path.abspath(own)}, []
    for f in out:
        if f not in seen:
            seen.add(f)
            kept.append(f)
    return kept[:FILES]


def _module_name(path: str) -> str:
    """The dotted name of the file in its package chain (`models.build_model`), or a fresh name
    when its folder is no package."""
    parts = [os.path.splitext(os.path.basename(path))[0]]
    folder = os.path.dirname(path)
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        parts.insert(0, os.path.basename(folder))
        folder = os.path.dirname(folder)
    if len(parts) > 1:
        try:
            importlib.import_module(parts[0])
            return ".".join(parts)
        except Exception:  # noqa: BLE001 - the package is not importable: a fresh name
            pass
    return f"_oracle_builder_{parts[-1]}_{hashlib.sha1(path.encode()).hexdigest()[:10]}"


def builder_elsewhere(cls, module, returns, takes_size):
    """The function of another file of `module`'s project that builds and returns `cls`, or None.
    `returns(fn_node, class_name)` and `takes_size(fn)` are model_factory's tests."""
    from ..package_import import exec_file_as
    from .sibling_files import _only_definitions
    own = getattr(module, "__file__", None)
    if not own:
        return None
    for path in candidate_files(own):
        try:
            with open(path, encoding="utf-8") as fh:
                tree = ast.parse(fh.read(), filename=path)
        except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
            continue
        names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and returns(n, cls.__name__)]
        if len(names) != 1 or not _only_definitions(tree):
            continue
        try:
            mod = exec_file_as(_module_name(path), path)
        except Exception:  # noqa: BLE001 - a builder that fails to import builds nothing
            continue
        fn = getattr(mod, names[0], None)
        if callable(fn) and takes_size(fn):
            return fn
    return None


def twin_widths(ctx, fn, values: dict) -> dict:
    """{argument: d_model} for each OPTIONAL argument of a model builder `fn` named for the model
    width alone, when it has two or more (`build_model(..., d_embed=512, d_model=512)`, an
    embedding width beside the attention's): binding by name gives the drawn width to one of them
    and left the other at its default, so the parts did not fit together. A name that may also mean
    another size (`hidden_size`, d_ff's too) is left to the binding."""
    from ..signatures import HYPER_ALIASES, signature_of
    sig = signature_of(fn)
    if sig is None or "d_model" not in values:
        return {}
    own = {a.lower() for a in HYPER_ALIASES.get("d_model", [])}
    others = {a.lower() for k, al in HYPER_ALIASES.items() if k != "d_model" for a in al}
    names = [p.name for p in sig.parameters.values() if p.default is not p.empty
             and p.name.lower() in own - others]
    if len(names) < 2:
        return {}
    ctx.note(f"{fn.__name__}() takes {len(names)} arguments named for the model width "
             f"({', '.join(names)}): each passed d_model {int(values['d_model'])}")
    return {n: int(values["d_model"]) for n in names}
