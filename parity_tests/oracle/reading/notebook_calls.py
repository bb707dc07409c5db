"""Top-level calls of a notebook export that can only fail where the oracle runs.

A notebook saved as `.py` (Colab's "Download .py", `jupyter nbconvert --to script`) keeps its
set-up cells: `from google.colab import drive` then `drive.mount('/content/drive')`, and shell or
magic lines exported as `get_ipython().system('pip install ...')`. The package is not installed
where the oracle runs, so the import gets a stand-in (standins.py), and the call on it raises at
import time: every component of the file is LOAD_ERROR although none of them uses the package.

Read from the text alone (`ast`): a top-level expression statement (its value discarded) that
calls something reached from a name the file binds only by importing it from a package that is
not installed (`drive.mount(...)`, `files.upload()`), or from `get_ipython()` when the file does
not define that name itself, is left out when the module runs. Nothing else changes: a statement
that binds a name (`uploaded = files.upload()`) still runs (and fails), and any later use of the
package by the candidate still raises naming it, so code that needs the package is RAISED as
before. The report names the lines left out.
"""
from __future__ import annotations

import ast
from typing import Callable


def _root(node: ast.AST) -> ast.AST:
    """The name a call chain starts from: `a.b(c).d()` -> `a`."""
    while True:
        if isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        else:
            return node


def _imported_from(tree: ast.Module) -> dict[str, set[str]]:
    """For each top-level name the file binds by an import, the top-level packages it comes from."""
    out: dict[str, set[str]] = {}
    for s in tree.body:
        if isinstance(s, ast.Import):
            for a in s.names:
                name = a.asname or a.name.split(".")[0]
                out.setdefault(name, set()).add(a.name.split(".")[0])
        elif isinstance(s, ast.ImportFrom) and s.level == 0 and s.module:
            for a in s.names:
                out.setdefault(a.asname or a.name, set()).add(s.module.split(".")[0])
    return out


def _bound_otherwise(tree: ast.Module) -> set[str]:
    """Names the file binds by anything but an import (assignments, definitions, loop targets)."""
    out = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    out |= {n.name for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    return out


def calls_to_leave_out(tree: ast.Module, not_installed: Callable[[str], bool]) -> list[ast.stmt]:
    """The top-level expression statements to leave out (see the module docstring)."""
    imported = _imported_from(tree)
    other = _bound_otherwise(tree)
    out = []
    for s in tree.body:
        if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)):
            continue
        root = _root(s.value)
        if not isinstance(root, ast.Name) or root.id in other:
            continue
        if root.id == "get_ipython" and root.id not in imported:
            out.append(s)
        elif root.id in imported and all(not_installed(top) for top in imported[root.id]):
            out.append(s)
    return out


def left_out_note(path: str, lines: list[int]) -> str:
    shown = ", ".join(str(n) for n in lines[:8]) + (" ..." if len(lines) > 8 else "")
    return (f"{path}: top-level call(s) on a package not installed here or on IPython (a "
            f"notebook's set-up, such as `drive.mount(...)`) left out when importing it (line(s) "
            f"{shown}); a component that uses the package still raises naming it")
