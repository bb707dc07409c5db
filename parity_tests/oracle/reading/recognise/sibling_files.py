"""A block's class defined in a sibling FILE of the candidate's folder, not in the candidate's own
file: Annotated-Transformer-style layers (`EncoderLayer(self_attn, feed_forward, size, dropout)`)
whose attention and feed-forward classes live in `attention.py` and `feed_forward.py` beside them,
imported only by a model-building file the oracle never loads. When no file of its folder holds
one, the files of the other folders of the package the folder belongs to are read the same way
(`models/block/encoder_block.py` taking `self_attention` and `position_ff`, whose classes live in
`models/layer/`): only when the folder above is a package itself (it holds an `__init__.py`), one
level of folders, never the folder above's own files.

The sibling files are read as text (`ast`) to find the top-level classes whose names play the role
(the same words and ranking as a class of the candidate's own file); only a file made of
definitions (imports, classes, functions, assignments, `if __name__ == "__main__":`) is then
imported, as a module of the candidate's package when it has one, else under a fresh name, so no
training script runs. This runs where the candidate's own module was imported: in the worker.
"""
from __future__ import annotations

import ast
import hashlib
import os
from types import ModuleType

_DEFINITIONS = (ast.Import, ast.ImportFrom, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef,
                ast.Assign, ast.AnnAssign)


def _only_definitions(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, _DEFINITIONS):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue                                    # a docstring
        if isinstance(node, ast.If) and "__name__" in ast.dump(node.test):
            continue                                    # if __name__ == "__main__": ...
        return False
    return True


def _class_names(path: str) -> list[str]:
    """Top-level class names of a definitions-only file, else []."""
    try:
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), filename=path)
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return []
    if not _only_definitions(tree):
        return []
    return [n.name for n in tree.body if isinstance(n, ast.ClassDef)]


def _import(module: ModuleType | None, path: str) -> ModuleType | None:
    from ..package_import import exec_file_as
    stem = os.path.splitext(os.path.basename(path))[0]
    package = getattr(module, "__package__", None) if module is not None else None
    name = f"{package}.{stem}" if package else \
        f"_oracle_sibling_{stem}_{hashlib.sha1(path.encode()).hexdigest()[:10]}"
    try:
        return exec_file_as(name, path)
    except Exception:                                   # noqa: BLE001 - a sibling that fails is no block
        return None


def _cousin_folders(folder: str) -> list[str]:
    """The other sub-folders of the package `folder` belongs to (its parent holds `__init__.py`),
    sorted; none when the parent is no package or cannot be listed."""
    parent = os.path.dirname(folder)
    if parent == folder or not os.path.isfile(os.path.join(parent, "__init__.py")):
        return []
    try:
        entries = sorted(os.listdir(parent))
    except OSError:
        return []
    return [os.path.join(parent, e) for e in entries
            if os.path.isdir(os.path.join(parent, e)) and os.path.join(parent, e) != folder
            and not e.startswith((".", "__"))]


def _found_in(folder: str, own: str, keys: tuple, accept) -> list:
    found = []
    try:
        entries = sorted(os.listdir(folder))
    except OSError:
        return []
    for entry in entries:
        path = os.path.join(folder, entry)
        if not entry.endswith(".py") or entry == "__init__.py" or \
                os.path.abspath(path) == os.path.abspath(own):
            continue
        for name in _class_names(path):
            low = name.lower()
            rank = next((i for i, k in enumerate(keys) if k in low), None)
            if rank is not None and accept(low):
                found.append((rank, len(name), path, name))
    return found


def sibling_file_class(module, keys: tuple, accept):
    """The class, from a sibling file of `module`'s file (else from a file of another folder of
    its package), whose name holds the earliest of `keys` (then the shortest name) and that
    `accept(name)` allows; None when there is none."""
    own = getattr(module, "__file__", None)
    if not own:
        return None
    folder = os.path.dirname(os.path.abspath(own))
    for group in ([folder], _cousin_folders(folder)):
        found = [f for d in group for f in _found_in(d, own, keys, accept)]
        for _rank, _len, path, name in sorted(found):
            mod = _import(module if os.path.dirname(path) == folder else None, path)
            cls = getattr(mod, name, None) if mod is not None else None
            if isinstance(cls, type):
                return cls
    return None
