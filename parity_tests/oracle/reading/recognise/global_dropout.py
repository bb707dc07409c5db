"""Recogniser: a dropout rate the submission reads as a module-level global, which no constructor
argument sets: `p_drop = 0.1` at the top of a file, or star-imported from the submission's own
settings module (`from hparams import *`), then `nn.Dropout(p_drop)` in a constructor or
`F.dropout(x, p_drop, self.training)` in a forward. The oracle builds every candidate with its
dropout rates at 0; such a rate kept its value, the train() run differed from the eval() one and
correct code was called MISMATCH ("a dropout at a rate of its own").

Read from the text, never run: in the candidate's module and every module loaded from the
submission's folder, a global holding a number in [0, 1) whose every read in that module's code is
an argument of a call whose callee names a dropout is set to 0.0 before each build, as a
constructor's dropout argument would be, and the report says so. A global read anywhere else too
(`x * (1 - p_drop)`: dropout scaled at inference), or in any of these modules as an attribute or
by its name in a string (`globals()["p_drop"]`), keeps its value, and a rate written as a number
(`nn.Dropout(0.1)`) is still the candidate's own and still shows.
"""
from __future__ import annotations

import ast
import os
import re
import sys

_WORD = re.compile(r"[A-Za-z_]\w*")


def _callee(node: ast.Call) -> str:
    f = node.func
    return (f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")).lower()


def _own_attribute(node: ast.Attribute) -> bool:
    """`self.x` / `cls.x`: an object's own attribute, never a module's global."""
    return isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")


def _reads(source: str) -> tuple[set[str], set[str], set[str]]:
    """(names loaded as an argument of a dropout call, names loaded elsewhere, names read
    indirectly): indirectly is as an attribute (`settings.p_drop`, `sys.modules[__name__].p_drop`)
    outside a dropout call's arguments, or as a word of a string in an expression
    (`globals()["p_drop"]`, getattr), which can reach any module's globals."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set(), set(), set()
    fed_nodes: set[int] = set()
    skip: set[int] = set()       # docstrings (they name, never read) and callees (F.dropout)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            skip.add(id(node.func))
        if isinstance(node, ast.Call) and "dropout" in _callee(node):
            fed_nodes |= {id(g) for g in list(node.args) + [k.value for k in node.keywords]
                          if isinstance(g, (ast.Name, ast.Attribute))}
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            skip.add(id(node.value))
    fed, other, indirect = set(), set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            (fed if id(node) in fed_nodes else other).add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) \
                and id(node) not in fed_nodes | skip and not _own_attribute(node):
            indirect.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            indirect |= set(_WORD.findall(node.value))
    return fed, other, indirect


def dropout_only_names(source: str) -> set[str]:
    """Names every read of which in `source` is an argument of a dropout call."""
    fed, other, indirect = _reads(source)
    return fed - other - indirect


def _root(path: str) -> str:
    """The submission's folder: the file's own, or the top of the package it sits in."""
    folder = os.path.dirname(os.path.abspath(path))
    while os.path.isfile(os.path.join(folder, "__init__.py")) and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
    return folder


def _modules(module) -> list:
    path = getattr(module, "__file__", None)
    if not path:
        return [module]
    root = _root(path) + os.sep
    if os.path.abspath(__file__).startswith(root):        # a candidate inside the harness's tree
        return [module]
    others = [m for m in list(sys.modules.values()) if m is not module and _own(m, root)]
    return [module] + others


def _own(m, root: str) -> bool:
    """A module loaded from the submission's folder, not from an environment kept inside it."""
    path = os.path.abspath(str(getattr(m, "__file__", None) or ""))
    return path.startswith(root) and not any(part in ("site-packages", "dist-packages")
                                             for part in path[len(root):].split(os.sep))


def _is_rate(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 1


def zero_rates(module, notes: list) -> None:
    """Before a top-level build: the dropout-only globals of the submission's modules set to 0.0."""
    if module is None:
        return
    sources = []
    for m in _modules(module):
        path = getattr(m, "__file__", None)
        try:
            with open(path, encoding="utf-8") as fh:
                sources.append((m, path, fh.read()))
        except (OSError, TypeError, ValueError):
            continue
    # a global any module reads as an attribute or by its name in a string keeps its value
    elsewhere = set().union(*(_reads(text)[2] for _, _, text in sources))
    for m, path, source in sources:
        names = sorted(n for n in dropout_only_names(source) - elsewhere
                       if _is_rate(m.__dict__.get(n)))
        for n in names:
            m.__dict__[n] = 0.0
        note = (f"dropout rate(s) {', '.join(names)}: global(s) of {os.path.basename(path)} read "
                f"only as a dropout's rate, set to 0.0 before each build as a constructor's dropout "
                f"argument would be")
        if names and note not in notes:
            notes.append(note)
