"""Recogniser: cross-attention whose two inputs carry names that do not say which is the query
(`forward(x, y, mask)`, the encoder's output first and the decoder's query second). Which argument
is the query is read from what the forward does with each (nothing runs): the one handed to a
projection named for the query (`self.q_layer(y)`, `self.W_q(y)`, `y @ self.wq`), while the other
is handed to one named for the key, the value or both (`self.kv_layer(x)`, `self.to_k(x)`). The
first is then the query and the second key and value, in whatever order the signature has them.

Read only for the first two required arguments, neither named for a mask, when no argument is
named for the query, key or value (names settle those: `forward(inputQueries, inputKeys,
inputValues)`), and only when exactly one of them feeds a query projection and the other feeds a
key or value one; anything else is left to the names. A forward that computes its values from the
query as well is still read this way, and the comparison says it is wrong.
"""
from __future__ import annotations

import ast
import inspect
import re
import textwrap

from ...components import K_ALIASES, Q_ALIASES, V_ALIASES

QUERY_WORDS = ("q", "query", "queries", "wq")
KV_WORDS = ("k", "v", "kv", "key", "keys", "value", "values", "wk", "wv", "wkv")


def _words(name: str) -> set[str]:
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
    return {w for w in re.split(r"[_\d]+", snake) if w}


def _role(attr: str) -> str | None:
    words = _words(attr)
    if words & set(QUERY_WORDS) and not words & set(KV_WORDS):
        return "query"
    if words & set(KV_WORDS) and not words & set(QUERY_WORDS):
        return "kv"
    return None


def _self_attr(node) -> str | None:
    """The last attribute name of `self.a.b` (a projection held on the module), else None."""
    if not isinstance(node, ast.Attribute):
        return None
    base = node
    while isinstance(base, ast.Attribute):
        base = base.value
    return node.attr if isinstance(base, ast.Name) and base.id == "self" else None


def _feeds(tree: ast.AST, names: tuple[str, str]) -> dict[str, set[str]]:
    """{argument: roles of the projections it is handed to directly}."""
    out: dict[str, set[str]] = {n: set() for n in names}

    def note(arg, proj) -> None:
        attr = _self_attr(proj)
        role = _role(attr) if attr else None
        if isinstance(arg, ast.Name) and arg.id in out and role:
            out[arg.id].add(role)

    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            note(node.args[0], node.func)                      # self.q_layer(y)
            if len(node.args) > 1:
                note(node.args[0], node.args[1])               # F.linear(y, self.wq)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            note(node.left, node.right)                        # y @ self.wq
    return out


def query_pair(fn, sig) -> tuple[str, str] | None:
    """(query argument, key/value argument) read from the forward's source as above, else None."""
    if sig is None:
        return None
    params = [p for p in sig.parameters.values() if p.name not in ("self", "cls")
              and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    own = {a.lower() for a in Q_ALIASES + K_ALIASES + V_ALIASES}
    required = [p.name for p in params if p.default is p.empty][:2]
    if len(required) < 2 or any("mask" in n.lower() for n in required) or \
            any(p.name.lower() in own or _role(p.name) for p in params if "mask" not in p.name.lower()):
        return None
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    feeds = _feeds(tree, (required[0], required[1]))
    queries = [n for n in required if "query" in feeds[n]]
    if len(queries) != 1:
        return None
    other = next(n for n in required if n != queries[0])
    return (queries[0], other) if "kv" in feeds[other] else None
