"""Which attributes a NumPy object's forward reads, from its source (nothing runs).

A NumPy Linear often keeps optimizer state of its weight's shape beside it (`moment_p`, `rmsprop_p`,
`velocity`, `bias_delta` beside `bias_params`): arrays that only `update` or `backward` reads. They
are parameters of no kind: numpy_space (slots.py) leaves them out, so that neither the resolver
(which of two (D, F) arrays is the weight?) nor a recogniser that reads shapes alone (gated_ffn: a
second up-projection?) takes them for weights.

`unread(obj, key)` is True only when the answer is sure: obj's class has a forward (`forward`,
`__call__`, `call`), and neither it nor the methods it calls on self (followed through the class)
names `key` (as `self.key`, a bare name or a string). A forward that hands `self` on, or reads its
attributes by `getattr` / `vars` / `__dict__`, reads anything: nothing is unread. So does an array
held again in a list or dict of the same object, or an object that keeps functions of its own.
"""
from __future__ import annotations

import ast
import functools
import inspect
import textwrap

FORWARDS = ("forward", "__call__", "call")
_EVERYTHING = None
_cache: dict[type, frozenset | None] = {}


def _tree(fn) -> ast.AST | None:
    try:
        return ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None


def _names(cls: type) -> frozenset | None:
    """Every name the forward closure mentions; None when it may read any attribute."""
    start = next((f for f in FORWARDS if f in _own_methods(cls)), None)
    if start is None:
        return _EVERYTHING
    names: set[str] = set()
    todo, done = [start], set()
    while todo:
        meth = todo.pop()
        if meth in done:
            continue
        done.add(meth)
        # every definition along the class's bases: an override calling super().forward reads
        # what the base's forward reads
        fns = [getattr(f, "fget", f) for f in (vars(k).get(meth) for k in cls.__mro__ if k is not object)
               if f is not None]
        trees = [_tree(f) for f in fns]
        if not trees or any(t is None for t in trees):
            return _EVERYTHING
        for tree in trees:
            if _scan(cls, tree, names, todo) is _EVERYTHING:
                return _EVERYTHING
        if "__dict__" in names:
            return _EVERYTHING
    return frozenset(names)


def _scan(cls: type, tree: ast.AST, names: set, todo: list):
    """Add the names `tree` mentions to `names`, the methods it calls on self (or super()) to
    `todo`; _EVERYTHING when it may read any attribute."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            names.add(node.attr)
            v = node.value
            on_self = isinstance(v, ast.Name) and v.id == "self" or isinstance(v, ast.Call) and \
                isinstance(v.func, ast.Name) and v.func.id == "super"
            if on_self and (callable(getattr(cls, node.attr, None)) or isinstance(
                    inspect.getattr_static(cls, node.attr, None), property)):
                todo.append(node.attr)
        elif isinstance(node, ast.Name):
            if node.id in ("getattr", "vars") or (node.id == "self" and _handed_on(tree, node)):
                return _EVERYTHING
            names.add(node.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.add(node.value)
    return names


def _own_methods(cls: type) -> set[str]:
    return {n for n in FORWARDS if callable(getattr(cls, n, None)) and
            any(n in vars(k) for k in cls.__mro__ if k is not object)}


def _handed_on(tree: ast.AST, name: ast.Name) -> bool:
    """`self` passed as an argument (`helper(self, x)`): the callee may read anything."""
    return any(isinstance(node, ast.Call) and (any(a is name for a in node.args) or
                                               any(k.value is name for k in node.keywords))
               for node in ast.walk(tree))


def _elsewhere(obj, key) -> bool:
    """The array is held again in one of obj's lists or dicts (read through them), or obj holds
    functions of its own (`self.fwd = self._fwd`: a forward the class does not show)."""
    arr = getattr(obj, key, None)
    for k, v in vars(obj).items():
        if inspect.isroutine(v) or isinstance(v, functools.partial):
            return True
        if k != key and isinstance(v, (list, tuple, dict)) and any(
                x is arr for x in (v.values() if isinstance(v, dict) else v)):
            return True
    return False


def unread(obj, key) -> bool:
    """True when obj's forward surely never reads its attribute `key`."""
    if not isinstance(key, str) or key not in getattr(obj, "__dict__", {}) or _elsewhere(obj, key):
        return False
    cls = type(obj)
    if cls not in _cache:
        try:
            _cache[cls] = _names(cls)
        except Exception:  # noqa: BLE001 - unusual classes: read as "may read anything"
            _cache[cls] = _EVERYTHING
    names = _cache[cls]
    return names is not None and key not in names
