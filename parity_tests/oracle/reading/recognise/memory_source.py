"""Recogniser: a decoder layer whose two inputs carry names that do not say which is the encoder's
memory (`forward(x, y, self_mask, cross_mask)` with `x` the memory and `y` the decoder's input).
The names bound `x` as the decoder input and `y` as the memory. Which one is the memory is read
from what the forward does with each (nothing runs): the memory is only ever handed to a call
together with the other input (`self.cross_attention(x, y, mask=...)`), while the decoder input is
also used on its own (`self.self_attention(y, ...)`, `y.clone()`, `y + ...`).

Read only for the first two required arguments, neither named for a mask, when no argument is
named for the memory (the component's memory names settle those: `forward(x, hide, memory=None)`)
or for the attention's query, key or value (layer_role_args reads those), and only when exactly one
of them is used solely beside the other; anything else is left to the names.
"""
from __future__ import annotations

import ast
import inspect
import textwrap

from ...components import K_ALIASES, Q_ALIASES, V_ALIASES


def _call_args(call: ast.Call) -> list:
    return list(call.args) + [k.value for k in call.keywords]


def _only_beside(tree: ast.AST, name: str, other: str) -> bool:
    """Every use of `name` is a direct argument of a call that also takes `other`."""
    parent = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
    uses = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name
            and isinstance(n.ctx, ast.Load)]
    if not uses:
        return False
    for use in uses:
        call = parent.get(id(use))
        if isinstance(call, ast.keyword):
            call = parent.get(id(call))
        if not isinstance(call, ast.Call) or use is call.func:
            return False
        if not any(isinstance(a, ast.Name) and a.id == other for a in _call_args(call)):
            return False
    return True


def memory_pair(fn, sig, memory_names) -> tuple[str, str] | None:
    """(decoder input argument, memory argument) read from the forward's source, else None."""
    if sig is None:
        return None
    params = [p for p in sig.parameters.values() if p.name not in ("self", "cls")
              and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    required = [p.name for p in params if p.default is p.empty][:2]
    names = {a.lower() for a in tuple(memory_names) + Q_ALIASES + K_ALIASES + V_ALIASES}
    if len(required) < 2 or any("mask" in n.lower() for n in required) or \
            any(p.name.lower() in names for p in params):
        return None
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    a, b = required
    beside = [n for n, o in ((a, b), (b, a)) if _only_beside(tree, n, o)]
    if len(beside) != 1:
        return None
    mem = beside[0]
    return (b if mem == a else a), mem


def bind(adapter, fn, how: dict):
    """The decoder layer's forward bound with the memory read from its source (the note added),
    else None. `how`: naming.bind's keyword arguments."""
    from ..naming import bind as bind_names
    from ..naming import signature_of
    comp = adapter.comp
    sig = signature_of(fn)
    found = memory_pair(fn, sig, comp.inputs[1].aliases) if comp.name == "decoder_layer" else None
    if found is None:
        return None
    dec, mem = found
    srcs = [("x", (dec,), True), ("memory", (mem,), True)]
    b = bind_names(fn, srcs + [(m.name, tuple(m.aliases), False) for m in comp.masks], **how)
    note = (f"forward({', '.join(sorted(found, key=list(sig.parameters).index))}, ...): {mem!r} is "
            f"only ever handed to a call beside {dec!r}, read as the encoder's memory and {dec!r} "
            f"as the decoder's input")
    if note not in adapter.notes:
        adapter.notes.append(note)
    return b
