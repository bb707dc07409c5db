"""Recogniser: function arguments that are dicts of arrays (picoGPT style: `ffn(x, c_fc, c_proj)`
calling `linear(x, **c_fc)` with `linear(x, w, b)`; `transformer_block(x, mlp, attn, ln_1, ln_2,
n_head)` spreading `**attn` into `mha(x, c_attn, c_proj, n_head)`).

Found by reading the function's code (its syntax tree, never by running it): an argument spread
with `**arg` into a call of a function of the same module takes, as keys, that function's required
parameters the call does not fill otherwise (positional arguments before it, named keywords), each
key again a dict when the called function spreads it in turn; an argument handed on whole
(`_heads(x, c_attn, ...)`) is what the callee makes of it; `arg["key"]` subscripts (chains too,
`params["fc1"]["w"]`) with string keys add keys. Each leaf becomes a parameter of its own, named
by its path (`attn.c_attn.w`), which the resolver maps like any other name; the call hands the
arrays over nested (`attn={"c_attn": {"w": .., "b": ..}, ...}`). When one dict argument holds every
weight, its keys are the names (`fc1.w`).
"""
from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any, Callable

MAX_DEPTH = 4


def _node(fn: Callable) -> ast.FunctionDef | None:
    try:
        src = textwrap.dedent(inspect.getsource(fn))
        tree = ast.parse(src)
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    return next((n for n in ast.walk(tree)
                 if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)


def _callee(fn: Callable, call: ast.Call) -> Callable | None:
    if not isinstance(call.func, ast.Name):
        return None
    target = getattr(fn, "__globals__", {}).get(call.func.id)
    return target if inspect.isfunction(target) else None


def _spread_keys(target: Callable, call: ast.Call, depth: int) -> dict[str, Any]:
    """The keys a `**arg` in `call` must supply: the callee's required parameters not given."""
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return {}
    given = {k.arg for k in call.keywords if k.arg is not None}
    n_pos = len(call.args)
    keys: dict[str, Any] = {}
    for i, p in enumerate(sig.parameters.values()):
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.default is not p.empty:
            continue
        if (i < n_pos and p.kind != p.KEYWORD_ONLY) or p.name in given:
            continue
        keys[p.name] = tree_of(target, p.name, depth + 1)
    return keys


def _passed_as(target: Callable, call: ast.Call, name: str) -> list[str]:
    """The callee's parameters that `call` hands the argument `name` to, whole."""
    try:
        params = list(inspect.signature(target).parameters.values())
    except (TypeError, ValueError):
        return []
    out = [params[i].name for i, a in enumerate(call.args) if i < len(params)
           and isinstance(a, ast.Name) and a.id == name
           and params[i].kind in (params[i].POSITIONAL_ONLY, params[i].POSITIONAL_OR_KEYWORD)]
    out += [k.arg for k in call.keywords if k.arg is not None and isinstance(k.value, ast.Name)
            and k.value.id == name]
    return out


def tree_of(fn: Callable, name: str, depth: int = 0) -> dict[str, Any] | None:
    """{key: subtree or None (an array)} when `fn` uses its argument `name` as a dict, else None."""
    if depth > MAX_DEPTH:
        return None
    node = _node(fn)
    if node is None:
        return None
    keys: dict[str, Any] = {}
    # in source order, so that keys keep the order the code uses them in (an order fallback needs it)
    for n in sorted((n for n in ast.walk(node) if isinstance(n, (ast.Call, ast.Subscript))),
                    key=lambda n: (n.lineno, n.col_offset)):
        if isinstance(n, ast.Call):
            target = _callee(fn, n)
            if target is None:
                continue
            for kw in n.keywords:
                if kw.arg is None and isinstance(kw.value, ast.Name) and kw.value.id == name:
                    keys.update(_spread_keys(target, n, depth))
            for sub in _passed_as(target, n, name):       # handed on whole: f(x, c_attn)
                keys.update(tree_of(target, sub, depth + 1) or {})
        else:
            path = _path(n, name)
            if path:
                _insert(keys, path)
    return keys or None


def _path(n: ast.Subscript, name: str) -> list[str] | None:
    """`name["a"]["b"]` -> ["a", "b"]; None for anything else."""
    path: list[str] = []
    v: ast.AST = n
    while isinstance(v, ast.Subscript):
        s = v.slice
        if not (isinstance(s, ast.Constant) and isinstance(s.value, str)):
            return None
        path.insert(0, s.value)
        v = v.value
    return path if isinstance(v, ast.Name) and v.id == name else None


def _insert(keys: dict, path: list[str]) -> None:
    d = keys
    for k in path[:-1]:
        if not isinstance(d.get(k), dict):
            d[k] = {}
        d = d[k]
    d.setdefault(path[-1], None)


def trees(fn: Callable, params: list[str]) -> dict[str, dict]:
    """The dict-valued arguments among `params` (a function's leftover arguments), with their keys."""
    out = {}
    for p in params:
        t = tree_of(fn, p)
        if t:
            out[p] = t
    return out


def leaves(params: list[str], found: dict[str, dict]) -> list[str]:
    """Parameter names, a dict argument replaced by its leaves' paths (`c_attn.w`)."""
    def walk(prefix: str, t) -> list[str]:
        if not isinstance(t, dict):
            return [prefix]
        return [leaf for k, sub in t.items() for leaf in walk(f"{prefix}.{k}", sub)]
    return [leaf for p in params for leaf in (walk(p, found[p]) if p in found else [p])]


def note(found: dict[str, dict]) -> str:
    return ("arguments holding dicts of arrays (read from the code): "
            + ", ".join(f"{p} = {{{', '.join(leaves([p], found))}}}" for p in found))
